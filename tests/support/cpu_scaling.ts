/**
 * Linearity checks that a busy machine cannot fail: how a run's time grows with its input (a
 * guard against quadratic scans, not a speed target), timed in this process's CPU time.
 *
 * {@link growthRatio} in scaling.ts times wall-clock rounds: on a two-core machine running four
 * test files, a round of the large input that waits for a core counts the wait as growth (issue:
 * 54.8 against a bound of 40 for linear work). Here a round counts the least of its wall time and
 * the CPU time this process spent in it ({@link cpuStopwatch}): waiting for a core costs nothing,
 * and helper threads (GC) cannot make a round longer than it was.
 *
 * The verdict is the one of the fastest rounds (as in scaling.ts), reached with less work: the
 * small input's rounds come first, then the large input's rounds stop as soon as one is fast
 * enough to meet the bound (a later round could only be faster, never change the verdict).
 */
import { cpuStopwatch } from "./latency.ts";

/** Shortest timed round, in milliseconds. */
export const MIN_ROUND_MS = 25;

/**
 * One round: `run` repeated until {@link MIN_ROUND_MS} of time (the least of wall and CPU time)
 * have passed; returns the time per call, in milliseconds.
 */
export function cpuRound(run: () => void): number {
  const watch = cpuStopwatch();
  let calls = 0;
  let elapsed = 0;
  do {
    run();
    calls++;
    elapsed = watch.ms();
  } while (elapsed < MIN_ROUND_MS);
  return elapsed / calls;
}

/** {@link cpuRound} for work that returns a promise (each call is awaited). */
export async function cpuRoundAsync(run: () => Promise<unknown>): Promise<number> {
  const watch = cpuStopwatch();
  let calls = 0;
  let elapsed = 0;
  do {
    await run();
    calls++;
    elapsed = watch.ms();
  } while (elapsed < MIN_ROUND_MS);
  return elapsed / calls;
}

/** The outcome of a linearity check. */
export interface Growth {
  /** The fastest large round over the fastest small round. */
  ratio: number;
  /** Whether `ratio` is below the bound asked for. */
  linear: boolean;
}

/**
 * Whether `large` (ten times the input of `small`, say) takes less than `bound` times as long as
 * `small`, each timed by its fastest of `rounds` rounds in CPU time. With ten times the input, a
 * linear algorithm gives about 10 and a quadratic one about 100: choose a bound between the two.
 * The large input's rounds end at the first that meets the bound.
 */
export function cpuGrowth(
  small: () => void,
  large: () => void,
  bound: number,
  rounds = 5,
): Growth {
  for (let i = 0; i < 3; i++) small();
  large();
  let smallBest = Infinity;
  for (let i = 0; i < rounds; i++) smallBest = Math.min(smallBest, cpuRound(small));
  let ratio = Infinity;
  for (let i = 0; i < rounds && !(ratio < bound); i++) {
    ratio = Math.min(ratio, cpuRound(large) / smallBest);
  }
  return { ratio, linear: ratio < bound };
}

/** {@link cpuGrowth} for work that returns a promise. */
export async function cpuGrowthAsync(
  small: () => Promise<unknown>,
  large: () => Promise<unknown>,
  bound: number,
  rounds = 5,
): Promise<Growth> {
  for (let i = 0; i < 3; i++) await small();
  await large();
  let smallBest = Infinity;
  for (let i = 0; i < rounds; i++) smallBest = Math.min(smallBest, await cpuRoundAsync(small));
  let ratio = Infinity;
  for (let i = 0; i < rounds && !(ratio < bound); i++) {
    ratio = Math.min(ratio, await cpuRoundAsync(large) / smallBest);
  }
  return { ratio, linear: ratio < bound };
}
