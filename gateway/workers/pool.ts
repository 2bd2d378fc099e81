/**
 * The main thread's side of the data-plane workers (`[runtime] workers`): it spawns them, takes
 * each configuration generation through them in two phases (every worker builds and starts its
 * listeners, then all switch, or none does), collects their metrics on demand, writes their audit
 * records, puts their queued requests in the delivery queues, drains them at shutdown, and
 * replaces one that fails. Its watchdog (watchdog.ts) pings every worker: one that stops answering
 * is logged and reported unresponsive (`/readyz` fails), and past the kill threshold it is
 * terminated, its listening sockets are shut down (listen_sockets.ts) and a new worker takes its
 * place. Deno does not stop a thread running synchronous JavaScript, so the terminated thread is
 * followed until it ends (lingering.ts).
 */
import {
  type ConfigProblem,
  DEFAULT_CONTENT_LIMITS,
  type GatewayConfig,
} from "../../shared/gateway_config/mod.ts";
import type { Logger } from "../../shared/mod.ts";
import type { AuditEntry } from "../audit/mod.ts";
import type { QueueStore } from "../delivery/mod.ts";
import { Body, RequestEnvelope } from "../envelope.ts";
import { toGatewayError } from "../errors.ts";
import type { Metrics } from "../observability/mod.ts";
import { type RequestFeed, requestFeed } from "../pipeline/mod.ts";
import { libc } from "./libc.ts";
import { type LingeringThread, LingeringThreads } from "./lingering.ts";
import { listeningInodes, shutDownSockets, stillListening } from "./listen_sockets.ts";
import { endOwnedProcess, watchdogOwnsProcess } from "./main_watchdog.ts";
import type { FromWorker, PrepareMessage, QueuedRequest, ToWorker } from "./protocol.ts";
import { testHooksEnabled } from "./test_hooks.ts";
import { Watchdog, type WatchdogSettings } from "./watchdog.ts";

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
  queue: (backend: string) => QueueStore | undefined;
  /** Starts worker `index` (1-based; the main thread is 0). Default: a module Worker. */
  spawn?: (index: number) => WorkerHandle;
  /** Longest wait for a worker to build a generation (default 60 s). */
  prepareTimeoutMs?: number;
  /** The main thread's feed of finished requests (the console's live tail); default this isolate's. */
  feed?: RequestFeed;
  /** The gateway's degraded components: each worker's reports go there as its own source. */
  health?: IsolateHealth;
}

/**
 * The degraded components as the pool feeds them (DegradedComponents): each worker reports under
 * its own `source`, so two isolates failing count once and one's recovery hides no other's.
 */
export interface IsolateHealth {
  degradedIn(source: string, component: string, reason: string): void;
  recoveredIn(source: string, component: string, quiet?: boolean): void;
  /** The worker ended or was replaced: what it reported goes. */
  forgetSource(source: string, quiet?: boolean): void;
}

/** The source a worker's degraded components are kept under, and named by in their reason. */
function workerSource(index: number): string {
  return `worker ${index}`;
}

/**
 * Longest wait for a worker's metrics when `/metrics` is scraped: a worker that answers later has
 * its figures added then (the next scrape shows them); an unresponsive one is not waited for.
 */
const COLLECT_TIMEOUT_MS = 750;

/**
 * `[runtime] watchdog_exit_ms` when the configuration does not set it (the schema's default): how
 * long a terminated worker thread may go on running before the process exits.
 */
const DEFAULT_EXIT_MS = 60_000;

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
  /** Requests in flight in it, as of its last metrics. */
  inFlight = 0;
  /** Inodes of its listening sockets, as its last heartbeat answer gave them. */
  sockets: string[] = [];
  /** Times a worker in this place was replaced. */
  replacements = 0;
  /** Its kernel thread id, as it reported it at start (undefined: not known). */
  tid: number | undefined;

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

  /** A heartbeat. */
  ping(seq: number): void {
    this.handle.postMessage({ type: "ping", seq });
  }
}

/** A terminated worker whose listening sockets could not be shut down (see listen_sockets.ts). */
interface Frozen {
  index: number;
  /** Its sockets' inodes; empty: not known, so never known to be gone. */
  sockets: string[];
  since: number;
  reason: string;
}

/** An isolate that keeps the gateway from being ready. */
export interface UnresponsiveWorker {
  index: number;
  /** Milliseconds since it last answered. */
  silent_ms: number;
  reason: string;
}

/** The state of one data-plane worker, as /admin/workers shows it. */
export interface WorkerInfo {
  /** 0 is the main thread. */
  index: number;
  /** The configuration generation it serves. */
  generation: number;
  /** Requests it finished (as of the last metrics collection). */
  requests: number;
  /** `starting`, `serving`, or `unresponsive` (its event loop has not answered the watchdog). */
  state: "starting" | "serving" | "unresponsive";
  /** False while it is unresponsive. */
  healthy: boolean;
  /** Milliseconds since it last answered the watchdog; null before its first answer. */
  heartbeat_age_ms: number | null;
  /** Times a worker in this place was replaced (it failed or was unresponsive). */
  replacements: number;
  /**
   * Threads of earlier workers in this place that the watchdog terminated and that still run
   * (Deno cannot stop synchronous JavaScript); present only while there is one.
   */
  lingering_threads?: LingeringThread[];
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
  readonly #watchdog = new Watchdog<Slot>({
    missed: (slot, ms) => this.#missed(slot, ms),
    recovered: (slot, ms) => this.#recovered(slot, ms),
    kill: (slot, ms) => this.#kill(slot, ms),
    tick: () => this.#lingering?.poll(this.#exitMs()),
  });
  /** Terminated workers whose listening sockets are still open (they keep /readyz failing). */
  #frozen: Frozen[] = [];
  /** Terminated worker threads still running; undefined where the C library is not loaded. */
  readonly #lingering: LingeringThreads | undefined;
  /** Why the C library is not loaded (terminated threads cannot be followed). */
  readonly #noLibc: string | undefined;
  /** That a terminated thread could not be followed was logged (once is enough). */
  #untrackedLogged = false;

  /** A pool of `count` workers (started by the first `prepare`). */
  constructor(count: number, deps: WorkerPoolDeps) {
    this.#count = count;
    this.#deps = deps;
    const calls = libc();
    if (typeof calls === "string") this.#noLibc = calls;
    else {
      this.#lingering = new LingeringThreads({
        logger: deps.logger,
        metrics: deps.metrics.workers,
        running: (tid) => calls.threadRunning(tid),
        mayExit: watchdogOwnsProcess,
        exit: (code) => endOwnedProcess(code, calls.exit),
      });
    }
    this.#feed = deps.feed ?? requestFeed;
    // The workers publish finished requests only while someone watches the live tail.
    this.#unwatch = this.#feed.onWatched((on) => {
      for (const slot of this.#slots) {
        if (slot.alive) slot.handle.postMessage({ type: "feed-watch", on });
      }
    });
  }

  readonly #feed: RequestFeed;
  /** Stops telling the workers of the tail's watchers (the pool is drained). */
  readonly #unwatch: () => void;

  /** Worker threads (the main thread not counted). */
  get size(): number {
    return this.#count;
  }

  /** Each worker's generation, requests served and health. */
  info(): WorkerInfo[] {
    return this.#slots.map((s) => {
      const unresponsive = this.#watchdog.unresponsive(s);
      const age = this.#watchdog.silence(s);
      const lingering = this.#lingering?.of(s.index);
      return {
        index: s.index,
        generation: s.generation,
        requests: s.requests,
        state: unresponsive ? "unresponsive" : s.generation === 0 ? "starting" : "serving",
        healthy: !unresponsive,
        heartbeat_age_ms: age === undefined ? null : Math.round(age),
        replacements: s.replacements,
        ...(lingering?.length ? { lingering_threads: lingering } : {}),
      };
    });
  }

  /** Starts the watchdog, or gives it new thresholds (a reload). */
  watch(settings: WatchdogSettings): void {
    if (this.#stopping) return;
    this.#watchdog.configure(settings);
  }

  /**
   * Workers that keep the gateway from being ready: unresponsive ones, and terminated ones whose
   * listening sockets could not be shut down (the kernel still gives them connections).
   */
  unresponsive(): UnresponsiveWorker[] {
    this.#forgetGoneFrozen();
    const out: UnresponsiveWorker[] = [];
    for (const s of this.#slots) {
      if (!this.#watchdog.unresponsive(s)) continue;
      const silent = Math.round(this.#watchdog.silence(s) ?? 0);
      out.push({ index: s.index, silent_ms: silent, reason: "no answer to the watchdog" });
    }
    for (const f of this.#frozen) {
      out.push({
        index: f.index,
        silent_ms: Math.round(performance.now() - f.since),
        reason: f.reason,
      });
    }
    return out;
  }

  /** Requests in flight in the workers, as of the last collection. */
  inFlight(): number {
    return this.#slots.reduce((n, s) => n + (s.alive ? s.inFlight : 0), 0);
  }

  /**
   * Test hook: blocks worker `index`'s event loop for at most `ms`; the function returned ends
   * the block sooner. Throws unless `GATEWAY_TEST_HOOKS=1` is in this process's environment (the
   * worker checks its own as well).
   */
  testBlock(index: number, ms: number): () => void {
    if (!testHooksEnabled()) throw new Error("test hooks are off (GATEWAY_TEST_HOOKS=1)");
    const slot = this.#slots[index - 1];
    if (!slot) throw new Error(`no data-plane worker ${index}`);
    const release = new Int32Array(new SharedArrayBuffer(4));
    slot.handle.postMessage({ type: "test-block", ms, release });
    return () => {
      Atomics.store(release, 0, 1);
      Atomics.notify(release, 0);
    };
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
      attempt: ++this.#attempts,
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
  /** Prepare attempts so far (PrepareMessage.attempt). */
  #attempts = 0;

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

  /**
   * Adds each worker's metrics since the last collection to the main thread's, waiting at most
   * COLLECT_TIMEOUT_MS; unresponsive and starting workers are not waited for.
   */
  async collect(): Promise<void> {
    this.#forgetGoneFrozen();
    await Promise.all(this.#slots.map(async (slot) => {
      if (!slot.alive || slot.generation === 0 || this.#watchdog.unresponsive(slot)) return;
      const id = this.#nextId++;
      slot.handle.postMessage({ type: "collect", id });
      // The figures are added when they arrive (#receive), in time or not.
      await slot.wait(`metrics:${id}`, COLLECT_TIMEOUT_MS);
    }));
  }

  /**
   * Stops the workers: each stops accepting, finishes its requests within `graceMs`, sends its
   * last metrics and audit records, and is terminated.
   */
  async drain(graceMs: number): Promise<void> {
    this.#stopping = true;
    this.#unwatch();
    this.#watchdog.stop();
    await Promise.all(this.#slots.map(async (slot) => {
      if (this.#watchdog.unresponsive(slot)) {
        // It would not answer: what it holds is lost either way.
        this.#deps.logger.warn("unresponsive data-plane worker terminated at shutdown", {
          worker: slot.index,
        });
        slot.alive = false;
        slot.handle.terminate();
        this.#ended(slot, true);
        return;
      }
      slot.handle.postMessage({ type: "drain", graceMs });
      const answer = await slot.wait("drained", graceMs + 5_000);
      if (answer?.type === "drained") this.#addMetrics(slot, answer.delta);
      slot.alive = false;
      slot.handle.terminate();
      this.#ended(slot, true);
    }));
  }

  #addMetrics(slot: Slot, delta: Record<string, { values: unknown[]; data: number[] }[]>): void {
    for (const s of delta.gateway_requests_total ?? []) slot.requests += s.data[0];
    this.#deps.metrics.addDataPlane(delta as Parameters<Metrics["addDataPlane"]>[0]);
  }

  async #prepareOne(slot: Slot, message: PrepareMessage): Promise<ConfigProblem[]> {
    slot.handle.postMessage(message);
    const answer = await slot.wait(
      `prepared:${message.attempt}`,
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
    this.#watchdog.watch(slot);
    return slot;
  }

  #wire(slot: Slot): void {
    const handle = slot.handle;
    // A new or replacement worker hears at once whether someone watches the live tail.
    if (this.#feed.watched) handle.postMessage({ type: "feed-watch", on: true });
    handle.onmessage = (event) => {
      if (slot.handle === handle) this.#receive(slot, event.data);
    };
    handle.onerror = (event) => {
      // Handled here, or the worker's error would end the whole process.
      event.preventDefault();
      if (slot.handle !== handle) return;
      this.#deps.logger.error("data-plane worker failed", {
        worker: slot.index,
        error: event.message,
      });
      if (this.#watchdog.unresponsive(slot)) this.#responsive(slot.index);
      this.#watchdog.forget(slot);
      slot.alive = false;
      handle.terminate();
      slot.failWaiters();
      this.#ended(slot, this.#stopping);
      if (this.#stopping) return;
      this.#deps.metrics.workers.replaced("failed");
      void this.#replace(slot);
    };
  }

  #missed(slot: Slot, silentMs: number): void {
    this.#deps.metrics.workers.unresponsive(slot.index, true);
    this.#deps.logger.error("data-plane worker unresponsive: its event loop is blocked", {
      worker: slot.index,
      silent_ms: Math.round(silentMs),
      in_flight: slot.inFlight,
    });
  }

  #recovered(slot: Slot, silentMs: number): void {
    this.#responsive(slot.index);
    this.#deps.logger.info("data-plane worker responsive again", {
      worker: slot.index,
      silent_ms: Math.round(silentMs),
    });
  }

  /**
   * Past the kill threshold: the worker is terminated, its listening sockets are shut down so
   * that the kernel gives new connections to the other isolates (a frozen thread cannot be
   * stopped: Deno ends it when its loop next runs), and a new worker takes its place.
   */
  #kill(slot: Slot, silentMs: number): void {
    const handle = slot.handle;
    const sockets = slot.sockets;
    const tid = slot.tid;
    slot.alive = false;
    handle.terminate();
    slot.failWaiters();
    this.#ended(slot, false);
    const shut = shutDownSockets(sockets);
    const open = shut.error === undefined ? stillListening(sockets) : undefined;
    const gone = open !== undefined && open.length === 0;
    if (!gone) {
      this.#frozen.push({
        index: slot.index,
        sockets: open ?? (listeningInodes() ? sockets : []),
        since: performance.now() - silentMs,
        reason: `terminated while frozen; its listening sockets could not be shut down: ${
          shut.error ?? "still listening"
        }`,
      });
    }
    if (gone) this.#responsive(slot.index);
    this.#deps.metrics.workers.replaced("unresponsive");
    this.#deps.logger.error("unresponsive data-plane worker terminated; a new one starts", {
      worker: slot.index,
      silent_ms: Math.round(silentMs),
      sockets_shut_down: shut.closed,
      ...(tid === undefined ? {} : { thread_id: tid }),
      ...(gone ? {} : { error: shut.error ?? "its sockets are still listening" }),
    });
    this.#follow(slot.index, tid);
    if (!this.#stopping) void this.#replace(slot);
  }

  /**
   * Follows the terminated thread `tid` of worker `index` until it ends (it may run on: Deno does
   * not stop synchronous JavaScript). Without its id or the C library, says once that it cannot.
   */
  #follow(index: number, tid: number | undefined): void {
    if (tid !== undefined && this.#lingering) {
      this.#lingering.add(index, tid);
      return;
    }
    if (this.#untrackedLogged) return;
    this.#untrackedLogged = true;
    this.#deps.logger.info("terminated data-plane worker threads are not followed", {
      worker: index,
      reason: this.#noLibc ?? "the worker did not report its thread id (no gettid in libc)",
    });
  }

  /** `[runtime] watchdog_exit_ms` of the generation the workers serve. */
  #exitMs(): number {
    return this.#committed?.config.runtime?.watchdog_exit_ms ?? DEFAULT_EXIT_MS;
  }

  /**
   * A worker is gone: the components it reported degraded are no longer its concern (a
   * replacement reports its own); `quiet` at shutdown.
   */
  #ended(slot: Slot, quiet: boolean): void {
    this.#deps.health?.forgetSource(workerSource(slot.index), quiet);
  }

  /** `gateway_worker_unresponsive` of `index` back to 0, unless a frozen worker there lingers. */
  #responsive(index: number): void {
    if (this.#frozen.some((f) => f.index === index)) return;
    this.#deps.metrics.workers.unresponsive(index, false);
  }

  /** Frozen workers whose sockets have closed since (their loop ran and Deno ended them). */
  #forgetGoneFrozen(): void {
    const gone = this.#frozen.filter((f) => {
      const open = f.sockets.length ? stillListening(f.sockets) : undefined;
      return open !== undefined && open.length === 0;
    });
    if (gone.length === 0) return;
    this.#frozen = this.#frozen.filter((f) => !gone.includes(f));
    for (const f of gone) {
      this.#deps.logger.info("terminated data-plane worker's listening sockets are closed", {
        worker: f.index,
      });
      const slot = this.#slots[f.index - 1];
      if (!slot || !this.#watchdog.unresponsive(slot)) this.#responsive(f.index);
    }
  }

  /** A failed or unresponsive worker's successor, started on the committed generation. */
  async #replace(slot: Slot): Promise<void> {
    slot.replacements++;
    slot.handle = (this.#deps.spawn ?? spawnWorker)(slot.index);
    slot.alive = true;
    slot.generation = 0;
    slot.inFlight = 0;
    slot.sockets = [];
    slot.tid = undefined;
    this.#wire(slot);
    this.#watchdog.watch(slot);
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
        slot.waiters.get(`prepared:${message.attempt}`)?.(message);
        return;
      case "committed":
        slot.waiters.get(`committed:${message.generation}`)?.(message);
        return;
      case "metrics":
        if (message.lastErrors) this.#feed.addErrors(message.lastErrors);
        this.#addMetrics(slot, message.delta);
        slot.inFlight = message.inFlight;
        slot.waiters.get(`metrics:${message.id}`)?.(message);
        return;
      case "thread":
        slot.tid = message.tid;
        return;
      case "pong":
        slot.sockets = message.sockets;
        this.#watchdog.answered(slot);
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
      case "feed":
        for (const event of message.events) this.#feed.publish(event);
        return;
      case "health": {
        const source = workerSource(slot.index);
        if (message.reason === undefined) {
          this.#deps.health?.recoveredIn(source, message.component, message.quiet);
        } else this.#deps.health?.degradedIn(source, message.component, message.reason);
        return;
      }
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
