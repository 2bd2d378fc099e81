/**
 * The write side of tracking, one per isolate: records wait in a bounded queue and are written
 * off the request path, one transaction per batch, every `flush_interval_ms` on the Clock. A full
 * queue, a store that cannot be opened or a write that fails (disk full, a broken file) drops the
 * records: counted (`dropped`, `gateway_errors_total{code="tracking_dropped"}`), logged once per
 * episode, and the `tracking` component shown degraded. A request never waits for the store.
 */
import type { GatewayConfig, TrackingConfig } from "../../shared/gateway_config/mod.ts";
import { type Clock, type Logger, systemClock } from "../../shared/mod.ts";
import type { ComponentHealth, Metrics } from "../observability/mod.ts";
import type { PipelineTrackingConfig } from "../../shared/gateway_config/mod.ts";
import { Capture, type PendingRecord } from "./capture.ts";
import {
  type ContentKey,
  loadTrackingKey,
  newContentKey,
  sealStages,
  type TrackingKey,
} from "./content.ts";
import { CONTENT_KEY_MAX_AGE_MS, type StoredRecord, TrackingStore } from "./store.ts";

/** Most content bytes waiting in one isolate's queue; past it records are dropped. */
export const MAX_QUEUED_CONTENT_BYTES = 64 * 1024 * 1024;
/** How long a store that failed to open is left alone before the next try. */
const REOPEN_MS = 10_000;
/** The degraded component's name. */
export const TRACKING_COMPONENT = "tracking";

/** What a recorder reports to. */
export interface RecorderDeps {
  logger: Logger;
  metrics?: Pick<Metrics, "errorCode">;
  /**
   * The gateway's degraded components: the main thread's own, or in a data-plane worker one
   * that forwards to them (workers/remote_health.ts), since each isolate has its own store.
   */
  health?: ComponentHealth;
  clock?: Clock;
}

/** One isolate's tracking writer. */
export class TrackingRecorder {
  readonly #deps: RecorderDeps;
  readonly #clock: Clock;
  #config: TrackingConfig | undefined;
  #store: TrackingStore | undefined;
  #storeDir: string | undefined;
  #openFailedAt = -Infinity;
  #key: TrackingKey | undefined;
  /** The content key sealing new records, and the store it is written to. */
  #contentKey: ContentKey | undefined;
  #contentKeyStore: TrackingStore | undefined;
  #keyFile: string | undefined;
  #queue: PendingRecord[] = [];
  #queuedBytes = 0;
  #timer: number | undefined;
  #flushing: Promise<void> | undefined;
  #dropped = 0;
  #written = 0;
  #problem: string | undefined;
  #closed = false;

  constructor(deps: RecorderDeps) {
    this.#deps = deps;
    this.#clock = deps.clock ?? systemClock;
  }

  /** Records dropped and written since start. */
  get counts(): { dropped: number; written: number; queued: number } {
    return { dropped: this.#dropped, written: this.#written, queued: this.#queue.length };
  }

  /** Why records are being dropped now, if they are. */
  get problem(): string | undefined {
    return this.#problem;
  }

  /** The recipient content is encrypted to (undefined without an identity file). */
  get key(): TrackingKey | undefined {
    return this.#key;
  }

  /** The open store (opened now if needed), or undefined when it cannot be. */
  store(): TrackingStore | undefined {
    if (this.#store || !this.#storeDir) return this.#store;
    if (this.#clock.now() - this.#openFailedAt < REOPEN_MS) return undefined;
    try {
      this.#store = new TrackingStore(this.#storeDir);
    } catch (err) {
      this.#openFailedAt = this.#clock.now();
      this.#fault(`cannot open the tracking store in ${this.#storeDir}: ${(err as Error).message}`);
    }
    return this.#store;
  }

  /**
   * Takes `config`'s `[tracking]` (at start and each reload): the store moves when its path
   * does, the key is read again. Throws when the identity file cannot be read (a reload keeps
   * the old one then).
   */
  async configure(config: GatewayConfig): Promise<void> {
    const t = config.tracking;
    if (
      t?.identity_file && t.path &&
      `${t.identity_file}/`.startsWith(`${t.path.replace(/\/+$/, "")}/`)
    ) {
      throw new Error(
        `[tracking] identity_file ${t.identity_file} is inside the store's directory ${t.path}: ` +
          "keep the key apart from what it protects (and from the store's backups)",
      );
    }
    this.#config = t;
    if (t?.identity_file && t.identity_file !== this.#keyFile) {
      this.#key = await loadTrackingKey(t.identity_file);
      this.#keyFile = t.identity_file;
      this.#contentKey = undefined;
    } else if (!t?.identity_file) {
      this.#key = undefined;
      this.#keyFile = undefined;
    }
    const dir = t?.path;
    if (dir !== this.#storeDir) {
      this.#store?.close();
      this.#store = undefined;
      this.#storeDir = dir;
      this.#openFailedAt = -Infinity;
      if (dir) this.store();
    } else if (dir && !this.#store) {
      // A reload tries a store that could not be opened at once, not REOPEN_MS after its failure:
      // an operator who fixed the directory reloads to see the fix take.
      this.#openFailedAt = -Infinity;
      this.store();
    }
  }

  /** A capture for one message of `pipeline` (the executor calls it for tracking pipelines). */
  begin(pipeline: string, config: PipelineTrackingConfig): Capture {
    return new Capture(this.#enqueueFn, pipeline, config);
  }

  readonly #enqueueFn = (record: PendingRecord) => this.enqueue(record);

  /** Queues a finished record; never waits, never throws. */
  enqueue(record: PendingRecord): void {
    const t = this.#config;
    if (!t || this.#closed) return;
    if (
      this.#queue.length >= t.queue_size ||
      this.#queuedBytes + record.capturedBytes > MAX_QUEUED_CONTENT_BYTES
    ) {
      this.#drop(1, "the tracking queue is full (the store does not keep up)");
      return;
    }
    this.#queue.push(record);
    this.#queuedBytes += record.capturedBytes;
    if (this.#timer === undefined && this.#flushing === undefined) {
      this.#timer = this.#clock.setTimeout(() => {
        this.#timer = undefined;
        void this.flush();
      }, t.flush_interval_ms);
    }
  }

  /** Writes what waits now, batch by batch (also called by tests and at shutdown). */
  flush(): Promise<void> {
    if (this.#flushing) return this.#flushing;
    this.#flushing = this.#drain().finally(() => {
      this.#flushing = undefined;
      if (this.#queue.length && this.#timer === undefined && !this.#closed && this.#config) {
        this.#timer = this.#clock.setTimeout(() => {
          this.#timer = undefined;
          void this.flush();
        }, this.#config.flush_interval_ms);
      }
    });
    return this.#flushing;
  }

  async #drain(): Promise<void> {
    while (this.#queue.length) {
      const size = this.#config?.batch_size ?? 500;
      const batch = this.#queue.splice(0, size);
      for (const r of batch) this.#queuedBytes -= r.capturedBytes;
      const store = this.store();
      if (!store) {
        this.#drop(batch.length, this.#problem ?? "the tracking store is not open");
        continue;
      }
      let rows: StoredRecord[];
      let key: ContentKey | undefined;
      try {
        key = batch.some((r) => r.captured?.length) ? await this.#currentKey(store) : undefined;
        rows = await Promise.all(batch.map((r) => this.#sealed(r, key)));
      } catch (err) {
        this.#drop(batch.length, `cannot encrypt tracked content: ${(err as Error).message}`);
        continue;
      }
      try {
        store.insert(rows, key);
        this.#written += rows.length;
        this.#recovered();
      } catch (err) {
        this.#drop(batch.length, `cannot write the tracking store: ${(err as Error).message}`);
        // A broken file is opened again later (it may have been replaced or repaired).
        if (!/SQLITE_(BUSY|FULL)|database is locked|disk is full/i.test((err as Error).message)) {
          store.close();
          this.#store = undefined;
          this.#openFailedAt = this.#clock.now();
        }
      }
    }
  }

  /** The content key for a batch written to `store` (a new one every 10 minutes). */
  async #currentKey(store: TrackingStore): Promise<ContentKey | undefined> {
    if (!this.#key) return undefined;
    const now = this.#clock.now();
    const k = this.#contentKey;
    if (
      !k || this.#contentKeyStore !== store || now - k.created > CONTENT_KEY_MAX_AGE_MS ||
      k.uses > 1_000_000
    ) {
      this.#contentKey = await newContentKey(this.#key.recipient, now);
      this.#contentKeyStore = store;
    }
    return this.#contentKey;
  }

  async #sealed(r: PendingRecord, key: ContentKey | undefined): Promise<StoredRecord> {
    const { captured, capturedBytes: _, ...row } = r;
    if (!captured?.length) return row;
    if (!key) {
      // Content without a key is never written in the clear: the metadata is kept alone.
      return { ...row, stages: [] };
    }
    key.uses++;
    return { ...row, content: await sealStages(captured, key.key, row.id) };
  }

  #drop(n: number, reason: string): void {
    this.#dropped += n;
    for (let i = 0; i < n; i++) this.#deps.metrics?.errorCode("tracking_dropped");
    this.#fault(reason);
  }

  #fault(reason: string): void {
    if (this.#problem === undefined) {
      // Once per episode: a flood of drops is one log line, and the counter says how many.
      this.#deps.logger.error("tracking records dropped", { reason });
    }
    this.#problem = reason;
    this.#deps.health?.degraded(TRACKING_COMPONENT, reason, this);
  }

  #recovered(): void {
    if (this.#problem === undefined) return;
    this.#problem = undefined;
    this.#deps.logger.info("tracking records written again", { dropped_total: this.#dropped });
    this.#deps.health?.recovered(TRACKING_COMPONENT, this);
  }

  /** Writes what waits, then closes the store. */
  async close(): Promise<void> {
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.flush();
    this.#closed = true;
    this.#store?.close();
    this.#store = undefined;
  }
}
