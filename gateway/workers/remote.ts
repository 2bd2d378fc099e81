/**
 * What a data-plane worker uses in place of the main thread's single-owner state: audit records
 * and queued requests are handed to the main thread (which owns the chained audit file and the
 * delivery queues' directories, counters and delivery loops).
 */
import type { BackendConfig } from "../../shared/gateway_config/mod.ts";
import { type AuditEntry, auditUnavailable, entryOf } from "../audit/mod.ts";
import type { QueueIntake, QueueOpener } from "../delivery/mod.ts";
import type { RequestEnvelope } from "../envelope.ts";
import { GatewayError } from "../errors.ts";
import type { AuditSink, RequestRecord } from "../pipeline/mod.ts";
import type { FromWorker, QueueResult } from "./protocol.ts";

/** Sends a message to the main thread, transferring `transfer`. */
export type PostToMain = (message: FromWorker, transfer?: Transferable[]) => void;

/**
 * Builds audit records here and sends them in batches to the main thread's trail. With a durable
 * trail (`durability = "sync"`) each batch carries an `ack` number, and the answers of its
 * requests wait for the main thread's `audit-committed` of it: one message each way per batch
 * (the records of one turn of the event loop), not per request.
 */
export class RemoteAudit implements AuditSink {
  enabled = false;
  #durable = false;
  #redacted: ReadonlySet<string> = new Set();
  #entries: AuditEntry[] = [];
  /** What the requests of the batch being gathered wait on (durable trail only). */
  #pending: PromiseWithResolvers<void> | undefined;
  /** Batches sent and not yet acknowledged, by `ack`. */
  readonly #waiting = new Map<number, PromiseWithResolvers<void>>();
  #nextAck = 1;
  #scheduled = false;
  readonly #post: PostToMain;

  constructor(post: PostToMain) {
    this.#post = post;
  }

  /**
   * The committed configuration's trail: the parameters to redact, or null for none; `durable`
   * when answers wait for their records.
   */
  configure(redacted: string[] | null, durable = false): void {
    this.enabled = redacted !== null;
    this.#durable = durable;
    this.#redacted = new Set(redacted ?? []);
  }

  /**
   * A request ended: its record goes out with the records of the same turn of the event loop,
   * before the response reaches the client, so that the trail keeps the order in which a client's
   * requests ended even when they land on different workers. Durable: the promise of the main
   * thread's word that the batch is written and fdatasync'ed.
   */
  requestFinished(
    record: RequestRecord,
    status: number,
    seconds: number,
  ): Promise<void> | undefined {
    this.#entries.push(entryOf(record, status, seconds, this.#redacted));
    if (!this.#scheduled) {
      this.#scheduled = true;
      queueMicrotask(() => this.flush());
    }
    if (!this.#durable) return undefined;
    if (!this.#pending) {
      this.#pending = Promise.withResolvers<void>();
      // Marked handled: a request whose client left no longer awaits it.
      this.#pending.promise.catch(() => {});
    }
    return this.#pending.promise;
  }

  /** Sends what is batched now. */
  flush(): void {
    this.#scheduled = false;
    if (this.#entries.length === 0) return;
    const pending = this.#pending;
    this.#pending = undefined;
    if (pending) {
      const ack = this.#nextAck++;
      this.#waiting.set(ack, pending);
      this.#post({ type: "audit", entries: this.#entries, ack });
    } else {
      this.#post({ type: "audit", entries: this.#entries });
    }
    this.#entries = [];
  }

  /** The main thread's answer for batch `ack`: durable, or (`error`) not kept. */
  settle(ack: number, error?: string): void {
    const waiting = this.#waiting.get(ack);
    if (!waiting) return;
    this.#waiting.delete(ack);
    if (error === undefined) waiting.resolve();
    else waiting.reject(auditUnavailable(error));
  }
}

/** Opens stand-ins for the main thread's delivery queues: `accept` hands the request over. */
export class RemoteQueues implements QueueOpener {
  readonly #post: PostToMain;
  readonly #waiting = new Map<
    number,
    { resolve: (id: string) => void; reject: (err: Error) => void }
  >();
  #next = 1;

  constructor(post: PostToMain) {
    this.#post = post;
  }

  /** The intake of a backend's queue (the main thread opened the queue itself). */
  open(config: BackendConfig): Promise<QueueIntake> {
    return Promise.resolve({ accept: (req) => this.#accept(config.name, req) });
  }

  /** The main thread's answer to one hand-over. */
  settle(result: QueueResult): void {
    const waiting = this.#waiting.get(result.id);
    if (!waiting) return;
    this.#waiting.delete(result.id);
    if (result.type === "queued") waiting.resolve(result.deliveryId);
    else {
      const err = new GatewayError(result.status, result.code, result.message);
      // A full queue's Retry-After reaches the sender whichever isolate it came through.
      if (result.headers) err.headers = result.headers;
      waiting.reject(err);
    }
  }

  /** Refuses every hand-over still waiting (the worker is stopping). */
  failAll(): void {
    for (const w of this.#waiting.values()) {
      w.reject(new GatewayError(503, "queue_closed", "the gateway is stopping"));
    }
    this.#waiting.clear();
  }

  async #accept(backend: string, req: RequestEnvelope): Promise<string> {
    // The body is read here (bounded by max_body_size); a copy of it is moved across (the
    // original may still be read by a tee of the same request).
    const body = (await req.body.bytes()).slice().buffer as ArrayBuffer;
    const headers: [string, string][] = [];
    req.readHeaders.forEach((value, name) => headers.push([name, value]));
    const id = this.#next++;
    const { promise, resolve, reject } = Promise.withResolvers<string>();
    this.#waiting.set(id, { resolve, reject });
    this.#post({
      type: "enqueue",
      id,
      request: {
        backend,
        requestId: req.id,
        protocol: req.protocol,
        method: req.method,
        path: req.path,
        query: req.queryString().replace(/^\?/, ""),
        headers,
        metadata: { ...req.metadata },
        endpoint: req.endpoint,
        pipeline: req.pipeline,
        contentType: req.body.contentType,
        body,
      },
    }, [body]);
    return await promise;
  }
}
