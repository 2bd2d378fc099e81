/**
 * The time source of the gateway and the cloud service: the current time and timers. Code that
 * waits (token renewal, back-off, holds, flush intervals) asks its clock, so that a test moves a
 * {@linkcode ManualClock} forward instead of sleeping.
 *
 * @example
 * ```ts
 * import { ManualClock, sleep } from "./clock.ts";
 *
 * const clock = new ManualClock();
 * const woke = sleep(clock, 60_000).then(() => "woke");
 * await clock.advance(60_000); // at once: the sleep ends without a minute passing
 * console.log(await woke); // "woke"
 * ```
 *
 * @module
 */

/** A handle of a timer set on a {@linkcode Clock}. */
export type TimerHandle = number;

/** Current time in milliseconds since the epoch, and timers on that time. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Calls `fn` once, `ms` milliseconds from now (on this clock). */
  setTimeout(fn: () => void, ms: number): TimerHandle;
  /** Cancels a timer of `setTimeout` (a handle already fired or cleared is ignored). */
  clearTimeout(handle: TimerHandle): void;
}

/** The system clock: `Date.now()` and the global timers. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms) as unknown as TimerHandle,
  clearTimeout: (handle) => clearTimeout(handle),
};

/** Resolves after `ms` on `clock`; rejects with the signal's reason when `signal` aborts first. */
export function sleep(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clock.clearTimeout(handle);
      reject(signal!.reason);
    };
    const handle = clock.setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * A signal that aborts `ms` from now on `clock` with a `TimeoutError` DOMException, as
 * `AbortSignal.timeout` does on the system clock (which it uses there).
 */
export function timeoutSignal(clock: Clock, ms: number): AbortSignal {
  if (clock === systemClock) return AbortSignal.timeout(ms);
  const ac = new AbortController();
  clock.setTimeout(
    () => ac.abort(new DOMException("Signal timed out.", "TimeoutError")),
    ms,
  );
  return ac.signal;
}

/**
 * A clock for tests: the system clock plus an offset that {@linkcode ManualClock.advance} moves.
 * Its timers count manual time only: one set for `ms` fires once `advance` has moved the clock
 * `ms` further (real time passing meanwhile does not count), in the order they are due.
 */
export class ManualClock implements Clock {
  #offset = 0;
  #nextHandle = 1;
  #timers = new Map<TimerHandle, { due: number; ms: number; fn: () => void }>();
  #waiters: { match: (ms: number) => boolean; resolve: () => void }[] = [];

  /** Now, shifted by every `advance` so far. */
  now(): number {
    return Date.now() + this.#offset;
  }

  /** A timer that fires when the clock is advanced `ms` past now. */
  setTimeout(fn: () => void, ms: number): TimerHandle {
    const handle = this.#nextHandle++;
    this.#timers.set(handle, { due: this.#offset + Math.max(0, ms), ms, fn });
    for (const w of this.#waiters.filter((w) => w.match(ms))) {
      this.#waiters.splice(this.#waiters.indexOf(w), 1);
      w.resolve();
    }
    return handle;
  }

  /** Cancels a pending timer. */
  clearTimeout(handle: TimerHandle): void {
    this.#timers.delete(handle);
  }

  /** Timers set and not yet fired or cleared. */
  get pending(): number {
    return this.#timers.size;
  }

  /**
   * Resolves once a timer set for `ms` (or for a time `ms` accepts; any timer without `ms`) is
   * pending: the code under test has begun to wait, so an `advance` now reaches that timer.
   */
  waitForTimer(ms?: number | ((ms: number) => boolean)): Promise<void> {
    const match = ms === undefined
      ? () => true
      : typeof ms === "number"
      ? (t: number) => t === ms
      : ms;
    for (const t of this.#timers.values()) if (match(t.ms)) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push({ match, resolve }));
  }

  /**
   * Moves time forward by `ms`, firing every timer due by then, earliest first: time stands at
   * each timer's due point while it fires (a timer it sets counts from there), and promise
   * callbacks run after each, so a timer set meanwhile fires too when it is due in the span.
   */
  async advance(ms: number): Promise<void> {
    const target = this.#offset + ms;
    // No timer in the span: time moves at once (callers that do not await see it too).
    if (![...this.#timers.values()].some((t) => t.due <= target)) {
      this.#offset = target;
      return;
    }
    await this.#fireUntil(target);
    this.#offset = target;
  }

  /** Fires the timers due now (earliest first), letting promise callbacks run after each. */
  runDue(): Promise<void> {
    return this.#fireUntil(this.#offset);
  }

  async #fireUntil(target: number): Promise<void> {
    for (;;) {
      await settle();
      let next: [TimerHandle, { due: number; ms: number; fn: () => void }] | undefined;
      for (const entry of this.#timers) {
        if (entry[1].due > target) continue;
        if (!next || entry[1].due < next[1].due) next = entry;
      }
      if (!next) return;
      this.#timers.delete(next[0]);
      this.#offset = Math.max(this.#offset, next[1].due);
      next[1].fn();
    }
  }
}

/** Lets queued promise callbacks run (a macrotask turn). */
function settle(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}
