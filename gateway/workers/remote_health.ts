/**
 * A data-plane worker's degraded components, forwarded to the main thread, which holds the
 * gateway's list (`/readyz`, `gateway_component_degraded`, the cloud's status, alerts). Only
 * changes travel: a component failing batch after batch with the same reason is one message.
 */
import type { ComponentHealth } from "../observability/mod.ts";
import type { FromWorker } from "./protocol.ts";

/** What this isolate last said of a component. */
interface Reported {
  reason: string;
  owner?: object;
}

/** The ComponentHealth of a worker: its reports go to the main thread as `health` messages. */
export class RemoteHealth implements ComponentHealth {
  readonly #post: (message: FromWorker) => void;
  readonly #reported = new Map<string, Reported>();

  constructor(post: (message: FromWorker) => void) {
    this.#post = post;
  }

  degraded(component: string, reason: string, owner?: object): void {
    const last = this.#reported.get(component);
    this.#reported.set(component, { reason, owner });
    if (last?.reason !== reason) this.#post({ type: "health", component, reason });
  }

  recovered(component: string, owner?: object, quiet = false): void {
    const last = this.#reported.get(component);
    // As DegradedComponents: a successor's state is not cleared by the one it replaced.
    if (!last || (owner !== undefined && last.owner !== undefined && last.owner !== owner)) return;
    this.#reported.delete(component);
    this.#post({ type: "health", component, ...(quiet ? { quiet } : {}) });
  }
}
