/**
 * Backend-call deadlines on one coarse clock. A timer per call (setTimeout + clearTimeout on every
 * proxied request) showed up as several percent of a request's CPU; calls instead register here
 * and a single unref'd interval aborts the ones past their deadline, to within `TICK_MS`. The
 * same tick runs an entry's `onArm` once when the call has lasted until `armAt`: work only a
 * long call needs (linking it to the client's disconnect) is then never done for the short ones.
 */

/** Resolution of backend timeouts, in milliseconds. */
export const TICK_MS = 25;

/** One registered deadline. */
export interface DeadlineEntry {
  /** `performance.now()` at which `expire` runs, once (the entry is unregistered first). */
  deadline: number;
  /** The deadline passed: abort with a TimeoutError. */
  expire(): void;
  /** `performance.now()` at which `onArm` runs, once (Infinity: never). */
  armAt: number;
  onArm(): void;
}

const pending = new Set<DeadlineEntry>();
let timer: ReturnType<typeof setInterval> | undefined;

function tick(): void {
  const now = performance.now();
  for (const entry of pending) {
    if (entry.deadline <= now) {
      pending.delete(entry);
      entry.expire();
    } else if (entry.armAt <= now) {
      entry.armAt = Infinity;
      entry.onArm();
    }
  }
  if (pending.size === 0 && timer !== undefined) {
    clearInterval(timer);
    timer = undefined;
  }
}

/** Registers `entry` until {@link removeDeadline} or its deadline. */
export function addDeadline(entry: DeadlineEntry): void {
  pending.add(entry);
  if (timer === undefined) {
    timer = setInterval(tick, TICK_MS);
    Deno.unrefTimer(timer as unknown as number);
  }
}

/** Unregisters `entry` (the call ended). */
export function removeDeadline(entry: DeadlineEntry): void {
  pending.delete(entry);
}

const noop = () => {};

/** The reason a backend call's deadline aborts it with. */
export function timeoutReason(): DOMException {
  return new DOMException("backend timeout", "TimeoutError");
}

/** Abort `controller` with a TimeoutError after `ms`; returns the function that cancels it. */
export function abortAfter(controller: AbortController, ms: number): () => void {
  const entry: DeadlineEntry = {
    deadline: performance.now() + ms,
    expire: () => controller.abort(timeoutReason()),
    armAt: Infinity,
    onArm: noop,
  };
  addDeadline(entry);
  return () => pending.delete(entry);
}
