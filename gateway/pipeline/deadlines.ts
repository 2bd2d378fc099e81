/**
 * Backend-call deadlines on one coarse clock. A timer per call (setTimeout + clearTimeout on every
 * proxied request) showed up as several percent of a request's CPU; calls instead register here
 * and a single unref'd interval aborts the ones past their deadline, to within `TICK_MS`.
 */

/** Resolution of backend timeouts, in milliseconds. */
export const TICK_MS = 25;

interface Entry {
  deadline: number;
  controller: AbortController;
}

const pending = new Set<Entry>();
let timer: ReturnType<typeof setInterval> | undefined;

function tick(): void {
  const now = performance.now();
  for (const entry of pending) {
    if (entry.deadline <= now) {
      pending.delete(entry);
      entry.controller.abort(new DOMException("backend timeout", "TimeoutError"));
    }
  }
  if (pending.size === 0 && timer !== undefined) {
    clearInterval(timer);
    timer = undefined;
  }
}

/** Abort `controller` with a TimeoutError after `ms`; returns the function that cancels it. */
export function abortAfter(controller: AbortController, ms: number): () => void {
  const entry: Entry = { deadline: performance.now() + ms, controller };
  pending.add(entry);
  if (timer === undefined) {
    timer = setInterval(tick, TICK_MS);
    Deno.unrefTimer(timer as unknown as number);
  }
  return () => pending.delete(entry);
}
