/** Retry delays with exponential growth and jitter, and a sleep that ends early on abort. */
import { type Clock, systemClock } from "./clock.ts";

/** Exponential backoff: base, 2·base, 4·base … up to max, each scaled by a random 50-100 %. */
export class Backoff {
  readonly #baseMs: number;
  readonly #maxMs: number;
  readonly #random: () => number;
  #attempt = 0;

  constructor(baseMs = 1_000, maxMs = 60_000, random: () => number = Math.random) {
    this.#baseMs = baseMs;
    this.#maxMs = maxMs;
    this.#random = random;
  }

  /** Failures since the last reset. */
  get attempts(): number {
    return this.#attempt;
  }

  /** The delay before the next attempt (and count one more failure). */
  next(): number {
    const ceiling = Math.min(this.#maxMs, this.#baseMs * 2 ** Math.min(this.#attempt, 30));
    this.#attempt++;
    return Math.round(ceiling * (0.5 + this.#random() * 0.5));
  }

  /** A success: start again from the base delay. */
  reset(): void {
    this.#attempt = 0;
  }
}

/** Waits `ms` on `clock`, or less when `signal` aborts (never rejects). */
export function sleep(ms: number, signal: AbortSignal, clock: Clock = systemClock): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clock.clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = clock.setTimeout(done, Math.max(0, ms));
    signal.addEventListener("abort", done, { once: true });
  });
}
