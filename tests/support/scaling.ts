/**
 * How a run's time grows with its input, for the linearity tests of parsers and transforms (a
 * guard against quadratic scans, not a speed target). The ratio takes the fastest of several runs
 * of each size, so a garbage collection or a busy neighbour in a parallel test run does not count
 * as growth; the small run's time is floored at half a millisecond against timer granularity.
 */

/** The fastest of `rounds` timed calls of `run`, in milliseconds, after one warm-up call. */
export function fastestRun(run: () => void, rounds = 5): number {
  run();
  let best = Infinity;
  for (let i = 0; i < rounds; i++) {
    const started = performance.now();
    run();
    best = Math.min(best, performance.now() - started);
  }
  return best;
}

/**
 * The fastest `large` run over the fastest `small` run. With ten times the input, a linear
 * algorithm gives about 10 and a quadratic one about 100: assert a bound between the two.
 */
export function growthRatio(small: () => void, large: () => void, rounds = 5): number {
  return fastestRun(large, rounds) / Math.max(0.5, fastestRun(small, rounds));
}
