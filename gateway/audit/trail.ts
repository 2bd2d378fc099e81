/**
 * The audit trail: one record per request that reaches a pipeline, queued in memory (bounded)
 * and written in batches off the request path, to the chained JSON Lines file and, when
 * configured, to a FHIR server as AuditEvents. A record that cannot be kept (queue full, disk
 * error, server refusal) is never lost silently: it is counted in `gateway_audit_dropped_total`,
 * logged as an error (at most every few seconds, with the count), and the file gets an
 * `audit.dropped` record saying how many are missing at that point of the chain.
 */
import { hostname } from "node:os";
import type { AuditConfig } from "../../shared/gateway_config/mod.ts";
import type { Logger } from "../../shared/mod.ts";
import type { AuditMetrics, AuditSinkName } from "../observability/mod.ts";
import type { AuditSink, RequestRecord } from "../pipeline/mod.ts";
import { AuditFile } from "./audit_file.ts";
import { type AuditEntry, BUILT_IN_REDACTED_QUERY, entryOf } from "./entry.ts";
import { auditEventOf, batchBundle } from "./fhir_event.ts";

/** Sends a batch Bundle (JSON bytes) to the audit backend; the answer's status and text. */
export type FhirDelivery = (
  bundle: Uint8Array,
  signal: AbortSignal,
) => Promise<{ status: number; body: string }>;

/** What the trail reports to. */
export interface AuditTrailDeps {
  logger: Logger;
  metrics: AuditMetrics;
}

/** Records queued before a write is started without waiting for the interval. */
const EAGER_BATCH = 512;
/** Least time between two error logs about lost records. */
const ALARM_INTERVAL_MS = 10_000;
/** Longest wait between attempts to reach an unavailable FHIR server. */
const MAX_BACKOFF_MS = 60_000;
/** Time allowed for one batch to reach the FHIR server. */
const SEND_TIMEOUT_MS = 30_000;

/** The gateway's audit trail; disabled until `configure` gives it a sink. */
export class AuditTrail implements AuditSink {
  readonly #deps: AuditTrailDeps;
  #config: AuditConfig | undefined;
  #file: AuditFile | undefined;
  #redacted: ReadonlySet<string> = new Set(BUILT_IN_REDACTED_QUERY);
  #queue: AuditEntry[] = [];
  #timer: ReturnType<typeof setInterval> | undefined;
  #writing: Promise<void> | undefined;
  /** Lost before the next file write: noted in the file as `audit.dropped`. */
  #gap = 0;
  #gapReason = "";
  #fhir: FhirSink | undefined;
  #unalarmed = 0;
  #alarmedAt = 0;

  constructor(deps: AuditTrailDeps) {
    this.#deps = deps;
  }

  /** True while at least one sink is configured. */
  get enabled(): boolean {
    return this.#file !== undefined || this.#fhir !== undefined;
  }

  /** The open file, if any (for tests and the management API). */
  get file(): string | undefined {
    return this.#file?.path;
  }

  /**
   * Applies `[audit]` (undefined: no trail); `alsoRedacted` names more query parameters whose
   * values stay out (those an `api_key` middleware reads its key from). The open file is kept when the path is the same;
   * a new path is opened before the old one is closed, and a file that cannot be opened throws
   * (the caller refuses the configuration) with the trail unchanged.
   */
  async configure(
    config: AuditConfig | undefined,
    deliver?: FhirDelivery,
    alsoRedacted: readonly string[] = [],
  ): Promise<void> {
    let file = this.#file;
    if (config?.file && config.file !== file?.path) {
      file = await AuditFile.open({
        path: config.file,
        maxFileBytes: config.max_file_bytes,
        keepFiles: config.keep_files,
        logger: this.#deps.logger,
      });
    }
    await this.flush();
    if (this.#file && this.#file !== file) await this.#file.close();
    if (!config?.file) file = undefined;
    file?.retune(config!.max_file_bytes, config!.keep_files);
    this.#file = file;
    this.#config = config;
    this.#redacted = new Set([
      ...BUILT_IN_REDACTED_QUERY,
      ...(config?.redact_query ?? []).map((n) => n.toLowerCase()),
      ...alsoRedacted.map((n) => n.toLowerCase()),
    ]);
    if (config?.fhir_backend && deliver) {
      const observer = config.source_name ?? hostname();
      if (this.#fhir) this.#fhir.retune(config, observer, deliver);
      else {
        this.#fhir = new FhirSink(config, observer, deliver, {
          lost: (n, reason) => this.#lost("fhir", reason, n),
          written: (n) => this.#deps.metrics.written("fhir", n),
        });
      }
    } else if (this.#fhir) {
      await this.#fhir.close();
      this.#fhir = undefined;
    }
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    if (this.#file) {
      const timer = setInterval(() => void this.flush(), config!.flush_interval_ms);
      Deno.unrefTimer(timer);
      this.#timer = timer;
    }
  }

  /** The front door's hook: a request ended. */
  requestFinished(record: RequestRecord, status: number, seconds: number): void {
    this.add(entryOf(record, status, seconds, this.#redacted));
  }

  /** Queues one record for every sink (never waits; a full queue loses it, counted). */
  add(entry: AuditEntry): void {
    this.#fhir?.add(entry);
    if (!this.#file || !this.#config) return;
    if (this.#queue.length >= this.#config.queue_size) {
      this.#lost("file", "queue_full", 1);
      return;
    }
    this.#queue.push(entry);
    if (this.#queue.length === EAGER_BATCH) void this.flush();
  }

  /** Writes what is queued now (waiting for a write already running first). */
  async flush(): Promise<void> {
    while (this.#writing) await this.#writing;
    if (!this.#file || (this.#queue.length === 0 && this.#gap === 0)) {
      this.#deps.metrics.queued("file", this.#queue.length);
      return;
    }
    this.#writing = this.#write(this.#file).finally(() => this.#writing = undefined);
    await this.#writing;
  }

  async #write(file: AuditFile): Promise<void> {
    const batch = this.#queue;
    this.#queue = [];
    const gap = this.#gap;
    const entries = gap > 0
      ? [{
        event: "audit.dropped" as const,
        time: new Date().toISOString(),
        dropped: gap,
        reason: this.#gapReason,
      }, ...batch]
      : batch;
    this.#gap = 0;
    try {
      await file.append(entries);
      this.#deps.metrics.written("file", batch.length);
    } catch (err) {
      this.#deps.logger.error("audit: records could not be written", {
        file: file.path,
        error: (err as Error).message,
      });
      // The note of the earlier gap was lost with them: it is owed again.
      this.#gap += gap;
      this.#lost("file", "write_error", batch.length);
    }
    this.#deps.metrics.queued("file", this.#queue.length);
  }

  /** Counts `n` lost records, notes them for the file, and alarms (rate-limited). */
  #lost(sink: AuditSinkName, reason: string, n: number): void {
    this.#deps.metrics.dropped(sink, reason, n);
    if (sink === "file") {
      this.#gap += n;
      this.#gapReason = reason;
    }
    this.#unalarmed += n;
    const now = Date.now();
    if (now - this.#alarmedAt < ALARM_INTERVAL_MS) return;
    this.#alarmedAt = now;
    this.#deps.logger.error("audit: records were lost", {
      sink,
      reason,
      dropped: this.#unalarmed,
    });
    this.#unalarmed = 0;
  }

  /** Writes everything queued, sends what the FHIR server will take, closes the file. */
  async close(): Promise<void> {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    await this.flush();
    await this.#fhir?.close();
    this.#fhir = undefined;
    await this.#file?.close();
    this.#file = undefined;
  }
}

/** What the FHIR sink reports. */
interface FhirSinkReport {
  lost(n: number, reason: string): void;
  written(n: number): void;
}

/** AuditEvents in batch Bundles to a FHIR server, one batch in flight, retried with backoff. */
class FhirSink {
  #config: AuditConfig;
  #observer: string;
  #deliver: FhirDelivery;
  readonly #report: FhirSinkReport;
  #queue: AuditEntry[] = [];
  #sending: Promise<void> | undefined;
  #backoffMs = 0;
  #retry: ReturnType<typeof setTimeout> | undefined;
  /** Set by close: one last attempt, no more retries. */
  #stopping = false;

  constructor(
    config: AuditConfig,
    observer: string,
    deliver: FhirDelivery,
    report: FhirSinkReport,
  ) {
    this.#config = config;
    this.#observer = observer;
    this.#deliver = deliver;
    this.#report = report;
  }

  retune(config: AuditConfig, observer: string, deliver: FhirDelivery): void {
    this.#config = config;
    this.#observer = observer;
    this.#deliver = deliver;
  }

  add(entry: AuditEntry): void {
    if (this.#queue.length >= this.#config.queue_size) {
      this.#report.lost(1, "queue_full");
      return;
    }
    this.#queue.push(entry);
    if (!this.#sending && this.#retry === undefined) this.#sending = this.#drain();
  }

  /** Sends batches until the queue is empty or the server is unavailable. */
  async #drain(): Promise<void> {
    // Let a burst of requests gather into one batch.
    await new Promise((r) => setTimeout(r, 0));
    try {
      while (this.#queue.length) {
        const batch = this.#queue.slice(0, this.#config.fhir_batch_size);
        const verdict = await this.#send(batch);
        if (verdict === "retry") {
          if (this.#stopping) return;
          this.#backoffMs = Math.min(MAX_BACKOFF_MS, Math.max(1000, this.#backoffMs * 2));
          const retry = setTimeout(() => {
            this.#retry = undefined;
            if (!this.#sending) this.#sending = this.#drain();
          }, this.#backoffMs);
          Deno.unrefTimer(retry);
          this.#retry = retry;
          return;
        }
        this.#backoffMs = 0;
        this.#queue.splice(0, batch.length);
      }
    } finally {
      this.#sending = undefined;
    }
  }

  /** One batch: `done` (taken or refused for good) or `retry` (server unavailable). */
  async #send(batch: AuditEntry[]): Promise<"done" | "retry"> {
    const bundle = batchBundle(batch.map((e) => auditEventOf(e, this.#observer)));
    let answer: { status: number; body: string };
    try {
      answer = await this.#deliver(
        new TextEncoder().encode(JSON.stringify(bundle)),
        AbortSignal.timeout(SEND_TIMEOUT_MS),
      );
    } catch {
      return "retry";
    }
    if (answer.status >= 500 || answer.status === 429 || answer.status === 408) return "retry";
    if (answer.status >= 400) {
      this.#report.lost(batch.length, "rejected");
      return "done";
    }
    // A batch-response says per entry whether it was created.
    let refused = 0;
    try {
      const response = JSON.parse(answer.body) as { entry?: { response?: { status?: string } }[] };
      for (const e of response.entry ?? []) {
        if (!/^2\d\d/.test(e.response?.status ?? "")) refused++;
      }
    } catch {
      // Not a Bundle: the server took the batch as a whole.
    }
    if (refused) this.#report.lost(refused, "rejected");
    this.#report.written(batch.length - refused);
    return "done";
  }

  /** Tries once more to send what is queued, then gives up on the rest (counted). */
  async close(): Promise<void> {
    this.#stopping = true;
    if (this.#retry !== undefined) clearTimeout(this.#retry);
    this.#retry = undefined;
    await this.#sending;
    if (this.#queue.length) {
      this.#sending = this.#drain();
      await this.#sending;
    }
    if (this.#queue.length) this.#report.lost(this.#queue.length, "unsent_at_stop");
    this.#queue = [];
  }
}
