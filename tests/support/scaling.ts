/**
 * How a run's time grows with its input, for the linearity tests of parsers and transforms (a
 * guard against quadratic scans, not a speed target). Each size is timed over repeated calls
 * lasting at least {@link MIN_ROUND_MS} (so timer granularity and fixed costs do not dominate a
 * small input), and the ratio takes the fastest of several such rounds, so a garbage collection
 * or a busy neighbour in a parallel test run does not count as growth.
 */

/** Shortest timed round, in milliseconds. */
export const MIN_ROUND_MS = 25;

/**
 * The fastest per-call time of `run` over `rounds` rounds, in milliseconds, after warm-up calls
 * (a round repeats the call until {@link MIN_ROUND_MS} have passed).
 */
export function fastestRun(run: () => void, rounds = 5): number {
  for (let i = 0; i < 3; i++) run();
  let best = Infinity;
  for (let i = 0; i < rounds; i++) {
    let calls = 0;
    const started = performance.now();
    let elapsed = 0;
    do {
      run();
      calls++;
      elapsed = performance.now() - started;
    } while (elapsed < MIN_ROUND_MS);
    best = Math.min(best, elapsed / calls);
  }
  return best;
}

/**
 * The fastest `large` run over the fastest `small` run. With ten times the input, a linear
 * algorithm gives about 10 and a quadratic one about 100: assert a bound between the two.
 */
export function growthRatio(small: () => void, large: () => void, rounds = 5): number {
  return fastestRun(large, rounds) / fastestRun(small, rounds);
}

/** {@link fastestRun} for work that returns a promise (each call is awaited). */
export async function fastestRunAsync(run: () => Promise<unknown>, rounds = 5): Promise<number> {
  for (let i = 0; i < 3; i++) await run();
  let best = Infinity;
  for (let i = 0; i < rounds; i++) {
    let calls = 0;
    const started = performance.now();
    let elapsed = 0;
    do {
      await run();
      calls++;
      elapsed = performance.now() - started;
    } while (elapsed < MIN_ROUND_MS);
    best = Math.min(best, elapsed / calls);
  }
  return best;
}

/** {@link growthRatio} for work that returns a promise. */
export async function growthRatioAsync(
  small: () => Promise<unknown>,
  large: () => Promise<unknown>,
  rounds = 5,
): Promise<number> {
  return await fastestRunAsync(large, rounds) / await fastestRunAsync(small, rounds);
}
