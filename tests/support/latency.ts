/**
 * Latencies of a small request sent again and again beside some work: the next one leaves as soon
 * as the previous one is answered, so every stretch of the work is covered by a request.
 *
 * Where the server runs in this process, a latency can count only the CPU time the process had
 * meanwhile ({@link cpuStopwatch}): a server whose loop is held works all along, while a process
 * waiting for a core (other test files on a two-core machine) spends nothing, and that wait is the
 * machine's, not the server's.
 */
import process from "node:process";

/** A stopwatch of this process's CPU time, never more than the wall time that passed. */
export interface CpuStopwatch {
  /** Milliseconds since the start: the least of the wall time and this process's CPU time. */
  ms(): number;
}

/** Starts a {@link CpuStopwatch} now. */
export function cpuStopwatch(): CpuStopwatch {
  const wall = performance.now();
  const cpu = process.cpuUsage();
  return {
    ms() {
      const used = process.cpuUsage(cpu);
      return Math.min(performance.now() - wall, (used.user + used.system) / 1000);
    },
  };
}

/** A running probe; `stop` waits for the request in flight and returns every latency (ms). */
export interface LatencyProbe {
  stop(): Promise<number[]>;
}

/**
 * Starts sending `request` (its answer must be 2xx) one after another until stopped. With
 * `{ cpu: true }` (a server in this process) each latency is a {@link cpuStopwatch}'s.
 */
export function latencyProbe(
  request: () => Promise<Response>,
  options: { cpu?: boolean } = {},
): LatencyProbe {
  let running = true;
  const latencies: number[] = [];
  const loop = (async () => {
    while (running) {
      const started = performance.now();
      const watch = options.cpu ? cpuStopwatch() : undefined;
      const res = await request();
      await res.body?.cancel();
      latencies.push(watch ? watch.ms() : performance.now() - started);
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
