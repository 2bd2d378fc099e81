/**
 * Latencies of a small request sent again and again beside some work: the next one leaves as soon
 * as the previous one is answered, so every stretch of the work is covered by a request.
 */

/** A running probe; `stop` waits for the request in flight and returns every latency (ms). */
export interface LatencyProbe {
  stop(): Promise<number[]>;
}

/** Starts sending `request` (its answer must be 2xx) one after another until stopped. */
export function latencyProbe(request: () => Promise<Response>): LatencyProbe {
  let running = true;
  const latencies: number[] = [];
  const loop = (async () => {
    while (running) {
      const started = performance.now();
      const res = await request();
      await res.body?.cancel();
      latencies.push(performance.now() - started);
      if (!res.ok) throw new Error(`the probe got ${res.status}`);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return latencies;
    },
  };
}
