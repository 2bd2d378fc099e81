/**
 * The gateway's delivery queues, one per backend with a `queue` table. They outlive
 * configurations (messages wait on disk whatever is reloaded): a build opens or reuses the queue
 * of each such backend, and the configuration that takes over becomes the one the queues deliver
 * through. A queue no longer configured stops delivering; its messages stay on disk (or in
 * JetStream) for the day it is configured again. `store` chooses where a queue keeps its messages:
 * files in its directory (queue.ts, the default) or a NATS JetStream stream that the gateways of a
 * cluster share (nats/).
 */
import { resolve } from "node:path";
import type { BackendConfig } from "../../shared/gateway_config/mod.ts";
import type { Logger } from "../../shared/mod.ts";
import type { RequestEnvelope, ResponseEnvelope } from "../envelope.ts";
import { GatewayError } from "../errors.ts";
import { type ComponentHealth, DegradedComponents } from "../observability/mod.ts";
import type { Backend } from "../pipeline/mod.ts";
import { DeliveryQueue } from "./queue.ts";
import type { QueueStats, QueueStore } from "./queue_store.ts";

/** The configuration the queues deliver through. */
export interface DeliveryTarget {
  /** The backend (not its queueing face) called `name`, when configured. */
  backend(name: string): Backend | undefined;
  acquire(): void;
  release(): void;
}

/** All queues of the gateway. */
export class DeliveryQueues {
  readonly #logger: Logger;
  readonly #health: ComponentHealth;
  readonly #queues = new Map<string, QueueStore>();
  #target: DeliveryTarget | undefined;
  /** Resolves when the first configuration is attached (queues open before it takes over). */
  readonly #firstTarget = Promise.withResolvers<void>();

  /** `health` hears of queues paused by their disk (default: a registry of their own). */
  constructor(logger: Logger, health?: ComponentHealth) {
    this.#logger = logger;
    this.#health = health ?? new DegradedComponents({ logger });
  }

  /**
   * The queue of backend `config` (opened, or the running one when its directory, or its stream
   * and connection, are the same).
   */
  async open(config: BackendConfig, baseDir: string): Promise<QueueStore> {
    const settings = config.queue!;
    const deps = {
      logger: this.#logger,
      deliver: (req: RequestEnvelope, signal: AbortSignal) =>
        this.deliver(config.name, req, signal),
      releasesBody: () => this.#target?.backend(config.name)?.releasesBody === true,
      attemptTimeoutMs: config.timeout_secs * 1000,
      health: this.#health,
    };
    const running = this.#queues.get(config.name);
    if (settings.store === "nats") {
      // The NATS client loads only for a gateway with a JetStream queue.
      const { NatsQueue } = await import("./nats/mod.ts");
      const key = await NatsQueue.connectionKey(settings);
      if (running instanceof NatsQueue && running.key === key) {
        running.retune(settings, deps);
        return running;
      }
      const queue = await NatsQueue.open(config.name, settings, deps);
      if (running) await running.close();
      this.#queues.set(config.name, queue);
      return queue;
    }
    const dir = resolve(baseDir, settings.dir ?? `queues/${config.name}`);
    if (running instanceof DeliveryQueue && running.dir === dir) {
      running.retune(settings, deps);
      return running;
    }
    for (const q of this.#queues.values()) {
      if (q.dir === dir && q.backend !== config.name) {
        throw new Error(`queue.dir ${dir} is the queue of backend ${q.backend} already`);
      }
    }
    const queue = await DeliveryQueue.open(config.name, dir, settings, deps);
    if (running) await running.close();
    this.#queues.set(config.name, queue);
    return queue;
  }

  /** One attempt through the current configuration's backend `name`, its answer read whole. */
  async deliver(
    name: string,
    req: RequestEnvelope,
    signal: AbortSignal,
  ): Promise<ResponseEnvelope> {
    // A queue opened at start delivers its waiting messages at once, while the configuration that
    // will serve them is still being built: the attempt waits for it (bounded by the attempt's
    // own timeout) rather than failing and sitting out a back-off.
    if (this.#target === undefined) await abortable(this.#firstTarget.promise, signal);
    const target = this.#target;
    const backend = target?.backend(name);
    if (!target || !backend) {
      throw new GatewayError(503, "backend_not_configured", `backend ${name} is not configured`);
    }
    target.acquire();
    try {
      const res = await backend.invoke(req, { signal, logger: this.#logger });
      // Read here, while the configuration is held: the verdict and a dead letter look at it.
      await res.body.bytes().catch(() => {});
      return res;
    } finally {
      target.release();
    }
  }

  /** The configuration now serving traffic; queues not in `names` stop delivering. */
  async attach(target: DeliveryTarget, names: ReadonlySet<string>): Promise<void> {
    this.#target = target;
    this.#firstTarget.resolve();
    for (const [name, q] of this.#queues) {
      if (names.has(name)) continue;
      this.#queues.delete(name);
      const left = q.stats().depth;
      if (left) {
        this.#logger.warn("a queue is no longer configured; its messages wait", {
          backend: name,
          waiting: left,
          dir: q.dir,
        });
      }
      await q.close();
    }
  }

  /** A queue by backend name. */
  get(name: string): QueueStore | undefined {
    return this.#queues.get(name);
  }

  /** Every queue's counters. */
  stats(): QueueStats[] {
    return [...this.#queues.values()].map((q) => q.stats());
  }

  /** Stop every queue (shutdown). */
  async close(): Promise<void> {
    for (const q of this.#queues.values()) await q.close();
    this.#queues.clear();
  }
}

/** `promise`, or a rejection with the signal's reason once it aborts. */
function abortable(promise: Promise<void>, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    });
  });
}
