/** Closed-loop load: N workers each send requests back to back for a duration; latencies kept. */

/** Result of one load run. */
export interface LoadResult {
  requests: number;
  errors: number;
  seconds: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
}

/** The `q` quantile (0-1) of sorted values. */
export function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i];
}

/** Run `concurrency` workers calling `once` for `seconds`. */
export async function runLoad(
  concurrency: number,
  seconds: number,
  once: () => Promise<void>,
): Promise<LoadResult> {
  const latencies: number[] = [];
  let errors = 0;
  const start = performance.now();
  const end = start + seconds * 1000;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (performance.now() < end) {
      const t = performance.now();
      try {
        await once();
        latencies.push(performance.now() - t);
      } catch {
        errors++;
      }
    }
  }));
  const elapsed = (performance.now() - start) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    requests: latencies.length,
    errors,
    seconds: elapsed,
    rps: latencies.length / elapsed,
    p50Ms: quantile(latencies, 0.5),
    p99Ms: quantile(latencies, 0.99),
  };
}
