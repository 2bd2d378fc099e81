/**
 * Whether a `rate_limit` middleware's shared store (Redis) can be reached, as one word of memory
 * shared by every data-plane isolate of the gateway, so that a change of state is reported once
 * per gateway however many isolates see it: the isolate whose compare-and-swap flips the word
 * reports it. The main thread, which holds the gateway's degraded components, also watches the
 * word, so a change a worker saw reaches `/readyz` and `gateway_component_degraded` too.
 */
import type { Logger } from "../../shared/mod.ts";
import type { ComponentHealth } from "../observability/mod.ts";

/** Bytes of the shared word (an Int32, padded). */
export const STORE_STATE_BYTES = 8;
/** How often the main thread looks at the word for changes workers made. */
const WATCH_MS = 500;

const UP = 0;
const DOWN = 1;

/** What the state reports to. */
export interface StoreStateDeps {
  /** The degraded component's name (`rate_limit.<middleware>`). */
  component: string;
  /** Said in the reason: what happens to requests meanwhile. */
  policy: string;
  logger: Logger;
  /**
   * The gateway's degraded components (main thread). Without it the state logs its changes itself
   * unless `quiet` (a worker: the main thread reports).
   */
  health?: ComponentHealth;
  quiet?: boolean;
}

/** The reachability of one shared store. */
export class StoreState {
  readonly #word: Int32Array;
  readonly #deps: StoreStateDeps;
  /** What this isolate last told `health`. */
  #reported = UP;
  #reason = "";
  #timer: ReturnType<typeof setInterval> | undefined;

  /** The state in `memory` (STORE_STATE_BYTES long, zero: up). */
  constructor(memory: SharedArrayBuffer, deps: StoreStateDeps) {
    this.#word = new Int32Array(memory, 0, 1);
    this.#deps = deps;
  }

  /** True while the store is known to be unreachable. */
  get down(): boolean {
    return Atomics.load(this.#word, 0) === DOWN;
  }

  /** A command failed for `reason`: the store is down (reported when this isolate saw it first). */
  failed(reason: string): void {
    this.#reason = reason;
    if (Atomics.load(this.#word, 0) === DOWN) return;
    if (Atomics.compareExchange(this.#word, 0, UP, DOWN) === UP) this.#report(DOWN);
  }

  /** A command was answered: the store is up. */
  succeeded(): void {
    if (Atomics.load(this.#word, 0) === UP) return;
    if (Atomics.compareExchange(this.#word, 0, DOWN, UP) === DOWN) this.#report(UP);
  }

  /** Main thread: follows the changes other isolates make, until `close`. */
  watch(): void {
    if (!this.#deps.health || this.#timer !== undefined) return;
    this.#timer = setInterval(() => {
      const now = Atomics.load(this.#word, 0);
      if (now !== this.#reported) this.#report(now);
    }, WATCH_MS);
    Deno.unrefTimer(this.#timer);
  }

  #report(state: number): void {
    const { component, policy, logger, health, quiet } = this.#deps;
    const reason = `the rate-limit store cannot be reached (${
      this.#reason || "seen by a data-plane worker"
    }); on_store_error = ${policy} applies`;
    if (health) {
      if (state === this.#reported) return;
      this.#reported = state;
      if (state === DOWN) health.degraded(component, reason, this);
      else health.recovered(component, this);
    } else if (!quiet) {
      if (state === DOWN) logger.error("rate limit store unreachable", { component, reason });
      else logger.info("rate limit store reachable again", { component });
    }
  }

  /** Stops watching; a degraded state this store reported goes with it (quietly). */
  close(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    if (this.#reported === DOWN) this.#deps.health?.recovered(this.#deps.component, this, true);
  }
}

/** A failure as the log shows it: its message, never the connection options. */
export function describe(err: unknown): string {
  const e = err as { code?: string; message?: string };
  const message = (e?.message ?? String(err)).slice(0, 200);
  return e?.code && !message.includes(e.code) ? `${e.code}: ${message}` : message;
}
