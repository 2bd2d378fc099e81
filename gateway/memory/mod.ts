/**
 * Memory admission control: the budget of bytes of bodies an isolate holds in memory to parse or
 * transform them, the per-request lease on it, and the figures of the V8 heap.
 *
 * @example
 * ```ts
 * import { BodyLease, MemoryBudget } from "./mod.ts";
 *
 * const budget = new MemoryBudget(16 * 1024 * 1024);
 * const first = new BodyLease(budget);
 * first.take(10_000_000); // fits
 * const second = new BodyLease(budget);
 * try {
 *   second.take(10_000_000);
 * } catch (err) {
 *   console.log((err as { code: string }).code); // memory_pressure: a 503 with Retry-After
 * }
 * first.release(); // the request ended
 * second.take(10_000_000); // fits now
 * console.log(budget.used); // 10000000
 * ```
 *
 * @module
 */
export {
  BodyLease,
  DEFAULT_BUDGET_SHARE,
  defaultBudget,
  isolateBudget,
  MemoryBudget,
  memoryPressure,
  RETRY_AFTER_SECS,
} from "./budget.ts";
export { type HeapFigures, heapFigures, heapLimit } from "./heap.ts";
