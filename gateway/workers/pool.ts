/**
 * The main thread's side of the data-plane workers (`[runtime] workers`): it spawns them, takes
 * each configuration generation through them in two phases (every worker builds and starts its
 * listeners, then all switch, or none does), collects their metrics on demand, writes their audit
 * records, puts their queued requests in the delivery queues, drains them at shutdown, and
 * replaces one that fails.
 */
import {
  type ConfigProblem,
  DEFAULT_CONTENT_LIMITS,
  type GatewayConfig,
} from "../../shared/gateway_config/mod.ts";
import type { Logger } from "../../shared/mod.ts";
import type { AuditEntry } from "../audit/mod.ts";
import type { DeliveryQueue } from "../delivery/mod.ts";
import { Body, RequestEnvelope } from "../envelope.ts";
import { toGatewayError } from "../errors.ts";
import type { Metrics } from "../observability/mod.ts";
import type { FromWorker, PrepareMessage, QueuedRequest, ToWorker } from "./protocol.ts";

/** What the pool needs of a worker (a `Worker`, or a stand-in in tests). */
export interface WorkerHandle {
  postMessage(message: ToWorker, transfer?: Transferable[]): void;
  terminate(): void;
  onmessage: ((event: MessageEvent<FromWorker>) => void) | null;
  onerror: ((event: ErrorEvent) => void) | null;
}

/** What the pool reports to and hands work to. */
export interface WorkerPoolDeps {
  logger: Logger;
  metrics: Metrics;
  /**
   * Where the workers' audit records go (the main thread's trail): the promise of their commit
   * when the worker's answers wait for it.
   */
  audit: { addAll(entries: readonly AuditEntry[]): Promise<void> | undefined };
  /** The main thread's delivery queue of a backend, by name. */
  queue: (backend: string) => DeliveryQueue | undefined;
  /** Starts worker `index` (1-based; the main thread is 0). Default: a module Worker. */
  spawn?: (index: number) => WorkerHandle;
  /** Longest wait for a worker to build a generation (default 60 s). */
  prepareTimeoutMs?: number;
}

/** The worker module each data-plane worker runs. */
const WORKER_MODULE = new URL("./worker_main.ts", import.meta.url).href;

function spawnWorker(index: number): WorkerHandle {
  return new Worker(WORKER_MODULE, {
    type: "module",
    name: `gateway-worker-${index}`,
  }) as unknown as WorkerHandle;
}

/** One worker and the answers it is waited for. */
class Slot {
  readonly index: number;
  handle: WorkerHandle;
  /** Waiters for a message, by a key such as `prepared:3` or `metrics:7`. */
  readonly waiters = new Map<string, (message: FromWorker | undefined) => void>();
  /** Requests this worker served (the sum of its `gateway_requests_total`), for /admin/workers. */
  requests = 0;
  generation = 0;
  alive = true;

  constructor(index: number, handle: WorkerHandle) {
    this.index = index;
    this.handle = handle;
  }

  /** Resolves with the message of `key`, or undefined when the worker fails or time runs out. */
  wait(key: string, timeoutMs: number): Promise<FromWorker | undefined> {
    const { promise, resolve } = Promise.withResolvers<FromWorker | undefined>();
    const timer = setTimeout(() => {
      this.waiters.delete(key);
      resolve(undefined);
    }, timeoutMs);
    this.waiters.set(key, (message) => {
      clearTimeout(timer);
      this.waiters.delete(key);
      resolve(message);
    });
    return promise;
  }

  /** Answers every waiter with nothing (the worker is gone). */
  failWaiters(): void {
    for (const w of [...this.waiters.values()]) w(undefined);
  }
}

/** The state of one data-plane worker, as /admin/workers shows it. */
export interface WorkerInfo {
  /** 0 is the main thread. */
  index: number;
  /** The configuration generation it serves. */
  generation: number;
  /** Requests it finished (as of the last metrics collection). */
  requests: number;
}

/** The data-plane worker threads of a gateway. */
export class WorkerPool {
  readonly #deps: WorkerPoolDeps;
  readonly #slots: Slot[] = [];
  readonly #count: number;
  /** The generation every worker serves: what a replacement worker is started with. */
  #committed: PrepareMessage | undefined;
  #nextId = 1;
  #stopping = false;

  /** A pool of `count` workers (started by the first `prepare`). */
  constructor(count: number, deps: WorkerPoolDeps) {
    this.#count = count;
    this.#deps = deps;
  }

  /** Worker threads (the main thread not counted). */
  get size(): number {
    return this.#count;
  }

  /** Each worker's generation and requests served. */
  info(): WorkerInfo[] {
    return this.#slots.map((s) => ({
      index: s.index,
      generation: s.generation,
      requests: s.requests,
    }));
  }

  /**
   * Every worker builds `config` and starts its listeners without serving it yet. Returns every
   * problem (each message names its worker); on any problem the workers that did prepare drop it
   * again, so none switches.
   */
  async prepare(
    generation: number,
    config: GatewayConfig,
    baseDir: string,
    memory: Map<string, SharedArrayBuffer>,
    auditRedacted: string[] | null,
  ): Promise<ConfigProblem[]> {
    while (this.#slots.length < this.#count) this.#start(this.#slots.length + 1);
    const message: PrepareMessage = {
      type: "prepare",
      generation,
      config,
      baseDir,
      memory,
      auditRedacted,
      forwardLogs: this.#deps.logger.hasSink,
    };
    const outcomes = await Promise.all(this.#slots.map((slot) => this.#prepareOne(slot, message)));
    const problems = outcomes.flat();
    if (problems.length) this.abort(generation);
    else this.#pending = message;
    return problems;
  }

  #pending: PrepareMessage | undefined;

  /** Every worker serves the prepared generation from now on. */
  async commit(generation: number): Promise<void> {
    if (this.#pending?.generation === generation) this.#committed = this.#pending;
    this.#pending = undefined;
    await Promise.all(this.#slots.map(async (slot) => {
      slot.handle.postMessage({ type: "commit", generation });
      const answer = await slot.wait(`committed:${generation}`, 30_000);
      if (answer) slot.generation = generation;
    }));
  }

  /** The prepared generation is dropped everywhere. */
  abort(generation: number): void {
    this.#pending = undefined;
    for (const slot of this.#slots) slot.handle.postMessage({ type: "abort", generation });
  }

  /** Adds each worker's metrics since the last collection to the main thread's. */
  async collect(): Promise<void> {
    await Promise.all(this.#slots.map(async (slot) => {
      const id = this.#nextId++;
      slot.handle.postMessage({ type: "collect", id });
      const answer = await slot.wait(`metrics:${id}`, 2_000);
      if (answer?.type === "metrics") this.#addMetrics(slot, answer.delta);
    }));
  }

  /**
   * Stops the workers: each stops accepting, finishes its requests within `graceMs`, sends its
   * last metrics and audit records, and is terminated.
   */
  async drain(graceMs: number): Promise<void> {
    this.#stopping = true;
    await Promise.all(this.#slots.map(async (slot) => {
      slot.handle.postMessage({ type: "drain", graceMs });
      const answer = await slot.wait("drained", graceMs + 5_000);
      if (answer?.type === "drained") this.#addMetrics(slot, answer.delta);
      slot.alive = false;
      slot.handle.terminate();
    }));
  }

  #addMetrics(slot: Slot, delta: Record<string, { values: unknown[]; data: number[] }[]>): void {
    for (const s of delta.gateway_requests_total ?? []) slot.requests += s.data[0];
    this.#deps.metrics.addDataPlane(delta as Parameters<Metrics["addDataPlane"]>[0]);
  }

  async #prepareOne(slot: Slot, message: PrepareMessage): Promise<ConfigProblem[]> {
    slot.handle.postMessage(message);
    const answer = await slot.wait(
      `prepared:${message.generation}`,
      this.#deps.prepareTimeoutMs ?? 60_000,
    );
    const file = message.config.source_files[0] ?? "<embedded>";
    if (!answer || answer.type !== "prepared") {
      return [{
        file,
        path: "runtime.workers",
        message: `data-plane worker ${slot.index} did not build the configuration in time`,
      }];
    }
    return answer.problems.map((p) => ({
      ...p,
      message: `data-plane worker ${slot.index}: ${p.message}`,
    }));
  }

  #start(index: number): Slot {
    const slot = new Slot(index, (this.#deps.spawn ?? spawnWorker)(index));
    this.#wire(slot);
    this.#slots[index - 1] = slot;
    return slot;
  }

  #wire(slot: Slot): void {
    const handle = slot.handle;
    handle.onmessage = (event) => this.#receive(slot, event.data);
    handle.onerror = (event) => {
      // Handled here, or the worker's error would end the whole process.
      event.preventDefault();
      this.#deps.logger.error("data-plane worker failed", {
        worker: slot.index,
        error: event.message,
      });
      if (slot.handle !== handle) return;
      slot.alive = false;
      handle.terminate();
      slot.failWaiters();
      if (!this.#stopping) void this.#replace(slot);
    };
  }

  /** A failed worker's successor, started on the committed generation. */
  async #replace(slot: Slot): Promise<void> {
    slot.handle = (this.#deps.spawn ?? spawnWorker)(slot.index);
    slot.alive = true;
    slot.generation = 0;
    this.#wire(slot);
    const committed = this.#committed;
    if (!committed) return;
    const problems = await this.#prepareOne(slot, committed);
    if (problems.length) {
      this.#deps.logger.error("replacement data-plane worker refused the configuration", {
        worker: slot.index,
        problems: problems.map((p) => `${p.path}: ${p.message}`),
      });
      return;
    }
    slot.handle.postMessage({ type: "commit", generation: committed.generation });
    if (await slot.wait(`committed:${committed.generation}`, 30_000)) {
      slot.generation = committed.generation;
      this.#deps.logger.info("data-plane worker replaced", { worker: slot.index });
    }
  }

  #receive(slot: Slot, message: FromWorker): void {
    switch (message.type) {
      case "prepared":
        slot.waiters.get(`prepared:${message.generation}`)?.(message);
        return;
      case "committed":
        slot.waiters.get(`committed:${message.generation}`)?.(message);
        return;
      case "metrics":
        slot.waiters.get(`metrics:${message.id}`)?.(message);
        return;
      case "drained":
        slot.waiters.get("drained")?.(message);
        return;
      case "audit": {
        const committed = this.#deps.audit.addAll(message.entries);
        if (message.ack !== undefined) this.#acknowledge(slot.handle, message.ack, committed);
        return;
      }
      case "enqueue":
        void this.#enqueue(slot, message.id, message.request);
        return;
      case "log":
        this.#deps.logger.writeLine(message.line);
        return;
    }
  }

  /**
   * Tells the worker behind `handle` when its audit records `ack` are durable (one message per
   * batch the worker sent), or that they were not kept: its answers then become 503s.
   */
  #acknowledge(handle: WorkerHandle, ack: number, committed: Promise<void> | undefined): void {
    if (!committed) {
      handle.postMessage({ type: "audit-committed", ack });
      return;
    }
    committed.then(
      () => handle.postMessage({ type: "audit-committed", ack }),
      (err) => {
        const g = toGatewayError(err);
        handle.postMessage({ type: "audit-committed", ack, error: g.internal ?? g.message });
      },
    );
  }

  /** A worker's request for a queued backend, into the main thread's queue. */
  async #enqueue(slot: Slot, id: number, r: QueuedRequest): Promise<void> {
    const queue = this.#deps.queue(r.backend);
    if (!queue) {
      slot.handle.postMessage({
        type: "queue-refused",
        id,
        status: 503,
        code: "backend_not_configured",
        message: `backend ${r.backend} has no delivery queue`,
      });
      return;
    }
    const req = new RequestEnvelope({
      id: r.requestId,
      protocol: r.protocol,
      method: r.method,
      path: r.path,
      headers: new Headers(r.headers),
      query: new URLSearchParams(r.query),
      metadata: r.metadata,
      // The worker applied the configured body limits already.
      body: new Body(new Uint8Array(r.body), r.contentType, {
        ...DEFAULT_CONTENT_LIMITS,
        max_body_size: Math.max(DEFAULT_CONTENT_LIMITS.max_body_size, r.body.byteLength),
      }),
      endpoint: r.endpoint,
    });
    if (r.pipeline) req.pipeline = r.pipeline;
    try {
      const deliveryId = await queue.accept(req);
      slot.handle.postMessage({ type: "queued", id, deliveryId });
    } catch (err) {
      const e = toGatewayError(err);
      slot.handle.postMessage({
        type: "queue-refused",
        id,
        status: e.status,
        code: e.code,
        message: e.message,
        headers: e.headers,
      });
    }
  }
}
