/**
 * {@link bestStall} with a bound: the verdict "in one of `attempts` runs the event loop was held
 * less than `boundMs`" reached with no more runs than it needs. A run under the bound settles it
 * (more runs could only find a shorter stall), so the runs stop there; work that holds the loop
 * stalls in every run and still gets all of its attempts.
 */
import { measureStall, type StallMeasure } from "./event_loop.ts";

/**
 * Runs `work` (up to `attempts` times) until a run holds the event loop less than `boundMs`, CPU
 * time as {@link measureStall} counts it. Returns the shortest stall and the last run's outcome;
 * `check` (when given) looks at every run's outcome.
 */
export async function stallUnder<T>(
  work: () => Promise<T> | T,
  boundMs: number,
  check?: (run: StallMeasure<T>) => void,
  attempts = 3,
): Promise<StallMeasure<T>> {
  let best = Infinity;
  let last: StallMeasure<T> = { stallMs: Infinity };
  for (let i = 0; i < attempts && !(best < boundMs); i++) {
    last = await measureStall(work);
    check?.(last);
    best = Math.min(best, last.stallMs);
  }
  return { ...last, stallMs: best };
}
