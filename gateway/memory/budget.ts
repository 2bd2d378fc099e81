/**
 * Admission control on memory, as Envoy's overload manager does it: bodies that are read whole
 * into memory to be parsed or transformed are counted against a budget of their isolate, and a
 * request that would take the count past it is refused (503 `memory_pressure`, `Retry-After`)
 * before its body is read, instead of taking the isolate's heap, and with it the whole process,
 * past its limit. Bodies that stream through are never counted.
 *
 * The budget is per isolate: each V8 isolate (the main thread, every data-plane worker) has its
 * own heap limit, and running out of any of them ends the process (docs/data-plane.md).
 *
 * @module
 */
import { GatewayError } from "../errors.ts";
import { heapLimit } from "./heap.ts";

/** Share of the isolate's V8 heap limit a budget takes when none is configured (1/8). */
export const DEFAULT_BUDGET_SHARE = 1 / 8;

/** Seconds a refused client is told to wait (`Retry-After`). */
export const RETRY_AFTER_SECS = 1;

/** The bytes of bodies one isolate may hold in memory for parsing and transforms. */
export class MemoryBudget {
  #limit: number;
  #configured: number | undefined;
  #used = 0;

  /** A budget of `limit` bytes (default: {@link DEFAULT_BUDGET_SHARE} of the heap limit). */
  constructor(limit?: number) {
    this.#configured = limit;
    this.#limit = limit ?? defaultBudget();
  }

  /** Sets the limit (`[runtime] max_buffered_bytes`); undefined: the default from the heap. */
  configure(limit: number | undefined): void {
    if (limit === this.#configured) return;
    this.#configured = limit;
    this.#limit = limit ?? defaultBudget();
  }

  /** The limit in bytes. */
  get limit(): number {
    return this.#limit;
  }

  /** Bytes held now. */
  get used(): number {
    return this.#used;
  }

  /**
   * Takes `bytes`, or throws the 503 when they do not fit. A body alone in an empty budget is
   * always let in, so that one larger than the whole budget is slow to pass, never impossible.
   * `refusable` false counts them whatever the budget holds (a backend's answer: refusing it
   * after the backend acted would invite a client to repeat what was done).
   */
  take(bytes: number, refusable = true): void {
    if (bytes <= 0) return;
    if (refusable && this.#used > 0 && this.#used + bytes > this.#limit) {
      throw memoryPressure(this.#limit);
    }
    this.#used += bytes;
  }

  /** Gives back `bytes` taken before. */
  give(bytes: number): void {
    this.#used = Math.max(0, this.#used - bytes);
  }
}

/** What one request holds of a budget: given back at once when the request ends. */
export class BodyLease {
  readonly #budget: MemoryBudget;
  #held = 0;

  /** A lease on `budget`, holding nothing yet. */
  constructor(budget: MemoryBudget) {
    this.#budget = budget;
  }

  /** Bytes this request holds. */
  get held(): number {
    return this.#held;
  }

  /**
   * Takes `bytes` more for this request (503 `memory_pressure` when they do not fit, unless
   * `refusable` is false: then they are counted whatever the budget holds).
   */
  take(bytes: number, refusable = true): void {
    this.#budget.take(bytes, refusable);
    this.#held += bytes;
  }

  /** The request ended: everything it held goes back. */
  release(): void {
    if (this.#held === 0) return;
    this.#budget.give(this.#held);
    this.#held = 0;
  }
}

/** The default budget: {@link DEFAULT_BUDGET_SHARE} of this isolate's V8 heap limit. */
export function defaultBudget(): number {
  return Math.floor(heapLimit() * DEFAULT_BUDGET_SHARE);
}

/** The 503 of a body that does not fit in the budget. */
export function memoryPressure(limit: number): GatewayError {
  const err = new GatewayError(
    503,
    "memory_pressure",
    `the gateway holds as many bodies in memory as its budget allows (${limit} bytes per ` +
      "isolate, [runtime] max_buffered_bytes); retry shortly",
  );
  err.headers = { "retry-after": String(RETRY_AFTER_SECS) };
  return err;
}

/** The budget of this isolate (module state is per isolate: each worker has its own). */
export const isolateBudget: MemoryBudget = new MemoryBudget();
