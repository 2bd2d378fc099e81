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
 * Calls `fn` every `ms` on `clock` until the returned function is called. On the system clock it
 * is one interval timer, which with `unref` does not keep the process alive; on another clock
 * each call sets the next timer first, so a {@linkcode ManualClock} runs it once per `advance`
 * that reaches it (a periodic check sees the new time once, not once per period in the span).
 */
export function every(
  clock: Clock,
  ms: number,
  fn: () => void,
  options: { unref?: boolean } = {},
): () => void {
  if (clock === systemClock) {
    const id = setInterval(fn, ms);
    if (options.unref) Deno.unrefTimer(id);
    return () => clearInterval(id);
  }
  let stopped = false;
  let handle: TimerHandle;
  const tick = () => {
    if (stopped) return;
    handle = clock.setTimeout(tick, ms);
    fn();
  };
  handle = clock.setTimeout(tick, ms);
  return () => {
    stopped = true;
    clock.clearTimeout(handle);
  };
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
 * `ms` further (real time passing meanwhile does not count), in the order they are due; `now()`
 * has moved at once, and callers that do not await `advance` see the new time too.
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
   * Moves time forward by `ms` at once, then fires every timer due by then, earliest first,
   * letting promise callbacks run after each. A timer set meanwhile counts from the new time (a
   * loop that waits again is woken once per `advance`, not once per period in the span).
   */
  async advance(ms: number): Promise<void> {
    this.#offset += ms;
    await this.runDue();
  }

  /** Fires the timers due now (earliest first), letting promise callbacks run after each. */
  async runDue(): Promise<void> {
    const due = [...this.#timers].filter(([, t]) => t.due <= this.#offset)
      .sort(([a, x], [b, y]) => x.due - y.due || a - b);
    for (const [handle, timer] of due) {
      await settle();
      if (!this.#timers.delete(handle)) continue; // cleared by an earlier one
      timer.fn();
    }
    await settle();
  }
}

/** Lets queued promise callbacks run (a macrotask turn). */
function settle(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}
