/**
 * The audit trail: one record per request that reaches a pipeline, to the chained JSON Lines file
 * and, when configured, to a FHIR server as AuditEvents. With `durability = "sync"` (the default)
 * a request's answer waits until its record is written and fdatasync'ed, together with the
 * records of the requests that ended at the same time (group_commit.ts); with `batched` records
 * are written in the background, and an unclean stop is recorded at the next start as an
 * `audit.gap` (run_marker.ts). A record that cannot be kept (queue full, disk error, server
 * refusal) is never lost silently: it is counted in `gateway_audit_dropped_total`, logged as an
 * error (at most every few seconds, with the count), the file gets an `audit.dropped` record
 * saying how many are missing at that point of the chain, and in sync mode the request whose
 * record it was is answered 503 `audit_unavailable` instead of as if recorded.
 */
import { hostname } from "node:os";
import {
  type Clock,
  type Logger,
  systemClock,
  timeoutSignal,
  type TimerHandle,
} from "../../shared/mod.ts";
import type { AuditConfig } from "../../shared/gateway_config/mod.ts";
import type { GatewayError } from "../errors.ts";
import type { AuditMetrics, AuditSinkName, ComponentHealth } from "../observability/mod.ts";
import type { AuditSink, RequestRecord } from "../pipeline/mod.ts";
import { AuditFile } from "./audit_file.ts";
import { type AuditEntry, BUILT_IN_REDACTED_QUERY, entryOf } from "./entry.ts";
import { auditEventOf, batchBundle } from "./fhir_event.ts";
import { GroupCommit } from "./group_commit.ts";
import { findUncleanStop, gapEntry, removeMarker, writeMarker } from "./run_marker.ts";
import { SyslogSink } from "./syslog_sink.ts";
import { auditUnavailable } from "./unavailable.ts";

/** Sends a batch Bundle (JSON bytes) to the audit backend; the answer's status and text. */
export type FhirDelivery = (
  bundle: Uint8Array,
  signal: AbortSignal,
) => Promise<{ status: number; body: string }>;

/** What the trail reports to. */
export interface AuditTrailDeps {
  logger: Logger;
  metrics: AuditMetrics;
  /** Time of the FHIR sink's back-off and send timeout, and of the loss alarms (tests). */
  clock?: Clock;
  /** The gateway's degraded components: the syslog sink reports an unreachable collector. */
  health?: ComponentHealth;
}

/** Records queued before a write is started without waiting for the interval or delay. */
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
  readonly #commit: GroupCommit<AuditEntry>;
  #timer: ReturnType<typeof setInterval> | undefined;
  /** Lost before the next file write: noted in the file as `audit.dropped`. */
  #gap = 0;
  #gapReason = "";
  #fhir: FhirSink | undefined;
  #syslog: SyslogSink | undefined;
  #unalarmed = 0;
  #alarmedAt = 0;
  /** When this process first opened an audit file (its run marker's start). */
  #started: string | undefined;

  constructor(deps: AuditTrailDeps) {
    this.#deps = deps;
    this.#commit = new GroupCommit({
      write: (batch) => this.#write(batch),
      delayMs: () => this.#config?.group_commit_ms ?? 0,
      maxBatch: EAGER_BATCH,
      owed: () => this.#gap > 0,
    });
  }

  /** True while at least one sink is configured. */
  get enabled(): boolean {
    return this.#file !== undefined || this.#fhir !== undefined || this.#syslog !== undefined;
  }

  /** The syslog sink, when `[audit.syslog]` is configured (tests, the management API). */
  get syslog(): SyslogSink | undefined {
    return this.#syslog;
  }

  /** The open file, if any (for tests and the management API). */
  get file(): string | undefined {
    return this.#file?.path;
  }

  /** True when answers wait for their record's write and fdatasync (`durability = "sync"`). */
  get durable(): boolean {
    return this.#config?.file !== undefined && this.#config.durability !== "batched";
  }

  /**
   * Applies `[audit]` (undefined: no trail); `alsoRedacted` names more query parameters whose
   * values stay out (those an `api_key` middleware reads its key from). The open file is kept when the path is the same;
   * a new path is opened before the old one is closed, and a file that cannot be opened throws
   * (the caller refuses the configuration) with the trail unchanged. Opening a file whose run
   * marker is still there (the run before did not stop cleanly) writes an `audit.gap` record.
   */
  async configure(
    config: AuditConfig | undefined,
    deliver?: FhirDelivery,
    alsoRedacted: readonly string[] = [],
  ): Promise<void> {
    let file = this.#file;
    let gap: AuditEntry | undefined;
    // The syslog sink's files first: a missing CA refuses the configuration with nothing changed.
    const node = config?.source_name ?? hostname();
    let syslog = this.#syslog;
    if (config?.syslog) {
      if (syslog) await syslog.retune(config.syslog, node);
      else {
        syslog = await SyslogSink.open(config.syslog, node, {
          logger: this.#deps.logger,
          health: this.#deps.health,
          clock: this.#deps.clock,
          baseDir: Deno.cwd(),
          report: {
            lost: (n, reason) => this.#unrecorded("syslog", reason, n),
            written: (n) => this.#deps.metrics.written("syslog", n),
            queued: (n) => this.#deps.metrics.queued("syslog", n),
          },
        });
      }
    }
    if (config?.file && config.file !== file?.path) {
      const stop = await findUncleanStop(config.file);
      file = await AuditFile.open({
        path: config.file,
        maxFileBytes: config.max_file_bytes,
        keepFiles: config.keep_files,
        logger: this.#deps.logger,
      });
      try {
        if (stop) gap = await this.#recordGap(file, stop);
        this.#started ??= new Date().toISOString();
        await writeMarker(file.path, {
          pid: Deno.pid,
          started: this.#started,
          durability: config.durability ?? "sync",
        });
      } catch (err) {
        await file.close().catch(() => {});
        throw err;
      }
    } else if (file && config?.file && config.durability !== this.#config?.durability) {
      // The marker says what an unclean stop from now on may cost.
      await writeMarker(file.path, {
        pid: Deno.pid,
        started: this.#started ?? new Date().toISOString(),
        durability: config.durability ?? "sync",
      });
    }
    await this.flush();
    if (this.#file && this.#file !== file) await this.#closeFile(this.#file);
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
          lost: (n, reason) => this.#unrecorded("fhir", reason, n),
          written: (n) => this.#deps.metrics.written("fhir", n),
        }, this.#deps.clock ?? systemClock);
      }
    } else if (this.#fhir) {
      await this.#fhir.close();
      this.#fhir = undefined;
    }
    if (!config?.syslog && this.#syslog) await this.#syslog.close();
    this.#syslog = config?.syslog ? syslog : undefined;
    if (gap) {
      this.#fhir?.add(gap);
      this.#syslog?.add(gap);
    }
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    if (this.#file) {
      const timer = setInterval(() => void this.flush(), config!.flush_interval_ms);
      Deno.unrefTimer(timer);
      this.#timer = timer;
    }
  }

  /** Writes (synced) the `audit.gap` record of the unclean stop found, and logs it as an error. */
  async #recordGap(
    file: AuditFile,
    stop: NonNullable<Awaited<ReturnType<typeof findUncleanStop>>>,
  ): Promise<AuditEntry> {
    const gap = gapEntry(stop, file.tip.seq);
    await file.append([gap], true);
    this.#deps.logger.error(
      stop.marker.durability === "sync"
        ? "audit: the gateway did not stop cleanly; every answered request has its record, " +
          "requests in flight then were not answered and may have none (audit.gap written)"
        : "audit: the gateway did not stop cleanly; the records of requests answered shortly " +
          "before may be missing (durability = batched; audit.gap written)",
      {
        file: file.path,
        last_seq: gap.last_seq,
        gap_seq: file.tip.seq,
        stopped_after: gap.stopped_after,
        run_pid: gap.run_pid,
        run_started: gap.run_started,
        durability: gap.durability,
      },
    );
    return gap;
  }

  /** The front door's hook: a request ended; the promise of its commit when its answer waits. */
  requestFinished(
    record: RequestRecord,
    status: number,
    seconds: number,
  ): Promise<void> | undefined {
    return this.add(entryOf(record, status, seconds, this.#redacted));
  }

  /**
   * Queues one record for every sink. With `durability = "sync"`, the promise of its write and
   * fdatasync, rejected with 503 `audit_unavailable` when it was not kept; else undefined (a
   * full queue then loses it, counted).
   */
  add(entry: AuditEntry): Promise<void> | undefined {
    return this.addAll([entry]);
  }

  /** {@link add} for records that go into the same batch (a worker's, as it sent them). */
  addAll(entries: readonly AuditEntry[]): Promise<void> | undefined {
    if (this.#fhir) { for (const entry of entries) this.#fhir.add(entry); }
    if (this.#syslog) { for (const entry of entries) this.#syslog.add(entry); }
    const config = this.#config;
    if (!config?.file) return undefined;
    const wait = config.durability !== "batched";
    let refused: GatewayError | undefined;
    if (!this.#file) refused = this.#unrecorded("file", "stopped", entries.length);
    else if (this.#commit.length + entries.length > config.queue_size) {
      refused = this.#unrecorded("file", "queue_full", entries.length);
    }
    if (!refused) return this.#commit.add(entries, wait);
    if (!wait) return undefined;
    const rejected = Promise.reject(refused);
    // Marked handled: the caller reads it, but one that does not must not end the process.
    rejected.catch(() => {});
    return rejected;
  }

  /** Writes what is queued now (waiting for a write already running first). */
  async flush(): Promise<void> {
    await this.#commit.flush();
    this.#deps.metrics.queued("file", this.#commit.length);
  }

  /** One batch to the file (synced when durable); throws `audit_unavailable` when it failed. */
  async #write(batch: AuditEntry[]): Promise<void> {
    const file = this.#file;
    if (!file) throw this.#unrecorded("file", "stopped", batch.length);
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
      await file.append(entries, this.durable);
      this.#deps.metrics.written("file", batch.length);
    } catch (err) {
      this.#deps.logger.error("audit: records could not be written", {
        file: file.path,
        error: (err as Error).message,
      });
      // The note of the earlier gap was lost with them: it is owed again.
      this.#gap += gap;
      throw this.#unrecorded("file", "write_error", batch.length);
    } finally {
      this.#deps.metrics.queued("file", this.#commit.length);
    }
  }

  /**
   * The one failure path of the trail: `n` records that will not be kept are counted, noted for
   * the file (`audit.dropped`) and alarmed (rate-limited); returns the error the requests that
   * wait for them (sync durability) are answered with.
   */
  #unrecorded(sink: AuditSinkName, reason: string, n: number): GatewayError {
    this.#deps.metrics.dropped(sink, reason, n);
    if (sink === "file") {
      this.#gap += n;
      this.#gapReason = reason;
    }
    this.#unalarmed += n;
    const now = (this.#deps.clock ?? systemClock).now();
    if (now - this.#alarmedAt >= ALARM_INTERVAL_MS) {
      this.#alarmedAt = now;
      this.#deps.logger.error("audit: records were lost", {
        sink,
        reason,
        dropped: this.#unalarmed,
      });
      this.#unalarmed = 0;
    }
    return auditUnavailable(`audit ${sink}: ${n} record(s) not kept (${reason})`);
  }

  /** Closes `file` and removes its run marker: every record it took is in it. */
  async #closeFile(file: AuditFile): Promise<void> {
    await file.close();
    await removeMarker(file.path);
  }

  /** Writes everything queued, sends what the FHIR server will take, closes the file. */
  async close(): Promise<void> {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    await this.flush();
    await this.#fhir?.close();
    this.#fhir = undefined;
    await this.#syslog?.close();
    this.#syslog = undefined;
    const file = this.#file;
    this.#file = undefined;
    if (file) await this.#closeFile(file);
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
  #retry: TimerHandle | undefined;
  /** Set by close: one last attempt, no more retries. */
  #stopping = false;
  readonly #clock: Clock;

  constructor(
    config: AuditConfig,
    observer: string,
    deliver: FhirDelivery,
    report: FhirSinkReport,
    clock: Clock,
  ) {
    this.#clock = clock;
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
          const retry = this.#clock.setTimeout(() => {
            this.#retry = undefined;
            if (!this.#sending) this.#sending = this.#drain();
          }, this.#backoffMs);
          if (this.#clock === systemClock) Deno.unrefTimer(retry);
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
        timeoutSignal(this.#clock, SEND_TIMEOUT_MS),
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
    if (this.#retry !== undefined) this.#clock.clearTimeout(this.#retry);
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
