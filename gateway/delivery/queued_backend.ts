/**
 * A backend with `[backends.<name>.queue]`: the request is written to the backend's durable queue
 * and answered at once with 202 and a delivery id (`X-Delivery-Id`); a DIMSE C-STORE through it is
 * answered Success once the instance is on disk. The queue delivers through the backend itself.
 */
import type { BackendConfig } from "../../shared/gateway_config/mod.ts";
import { type RequestEnvelope, ResponseEnvelope } from "../envelope.ts";
import type { Backend, BackendCall } from "../pipeline/mod.ts";
import type { BackendConfig as QueuedBackendConfig } from "../../shared/gateway_config/mod.ts";

/**
 * Where a queued backend puts a request: the backend's DeliveryQueue in the main thread, or, in a
 * data-plane worker, a forwarder to it (gateway/workers).
 */
export interface QueueIntake {
  /** Persists the request; resolves with its delivery id, or throws a GatewayError (503, 507). */
  accept(req: RequestEnvelope): Promise<string>;
}

/** What a runtime build opens the queue of a backend with `[backends.<name>.queue]` through. */
export interface QueueOpener {
  /** The intake of `config`'s queue (directories resolve against `baseDir`). */
  open(config: QueuedBackendConfig, baseDir: string): Promise<QueueIntake>;
}

/** The queueing face of a backend. */
export class QueuedBackend implements Backend {
  readonly inner: Backend;
  readonly queue: QueueIntake;

  constructor(inner: Backend, queue: QueueIntake) {
    this.inner = inner;
    this.queue = queue;
  }

  get name(): string {
    return this.inner.name;
  }

  get config(): BackendConfig {
    return this.inner.config;
  }

  /** The inner backend's targets, for the management API's pipeline listing. */
  get pool(): unknown {
    return (this.inner as { pool?: unknown }).pool;
  }

  async invoke(req: RequestEnvelope, _call: BackendCall): Promise<ResponseEnvelope> {
    const id = await this.queue.accept(req);
    const res = ResponseEnvelope.json(202, {
      status: "queued",
      delivery_id: id,
      backend: this.name,
    });
    res.headers.set("x-delivery-id", id);
    res.backend = this.name;
    return res;
  }

  close(): void | Promise<void> {
    return this.inner.close();
  }
}
