/**
 * Linearity checks that a busy machine cannot fail: how a run's time grows with its input (a
 * guard against quadratic scans, not a speed target), timed in the CPU time of the thread that
 * runs it.
 *
 * Wall-clock rounds would not do (the wall-clock helper this replaced is gone): on a two-core
 * machine running five test files, a round of the large input that waits for a core counts the
 * wait as growth (54.8, and 41.7 in a later run, against a bound of 40 for linear work). The CPU time of the process would not do either:
 * `deno test --parallel` runs its test files as threads of one process, so the process's CPU time
 * counts the other files' work too. A thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`, read through
 * libc, to the nanosecond) counts only the work of the test's own thread: waiting for a core
 * costs nothing, and neither do the test files beside it. Where that clock cannot be read, the
 * least of the wall time and the process's CPU time ({@link cpuStopwatch}) stands in.
 *
 * The verdict is the one of the fastest rounds, reached with less work: the
 * small input's rounds come first, then the large input's rounds stop as soon as one is fast
 * enough to meet the bound (a later round could only be faster, never change the verdict).
 */
import { cpuStopwatch } from "./latency.ts";

/** A clock of this thread's CPU time in milliseconds, and its release. */
export interface ThreadClock {
  ms(): number;
  close(): void;
}

/**
 * Linux's per-thread CPU clock through libc, or a stand-in (see the module comment). Also for a
 * test that times one piece of work done on its own thread (a request to a gateway running in
 * it): `close` it when done.
 */
export function threadClock(): ThreadClock {
  try {
    const libc = Deno.dlopen("libc.so.6", {
      clock_gettime: { parameters: ["i32", "buffer"], result: "i32" },
    });
    const CLOCK_THREAD_CPUTIME_ID = 3;
    const ts = new BigInt64Array(2);
    const read = () => {
      if (libc.symbols.clock_gettime(CLOCK_THREAD_CPUTIME_ID, ts) !== 0) {
        throw new Error("clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed");
      }
      return Number(ts[0]) * 1e3 + Number(ts[1]) / 1e6;
    };
    read();
    return { ms: read, close: () => libc.close() };
  } catch {
    const watch = cpuStopwatch();
    return { ms: () => watch.ms(), close: () => {} };
  }
}

/** Shortest timed round, in milliseconds. */
export const MIN_ROUND_MS = 25;

/**
 * One round: `run` repeated until {@link MIN_ROUND_MS} of the thread's CPU time have passed;
 * returns the time per call, in milliseconds.
 */
function cpuRound(clock: ThreadClock, run: () => void): number {
  const started = clock.ms();
  let calls = 0;
  let elapsed = 0;
  do {
    run();
    calls++;
    elapsed = clock.ms() - started;
  } while (elapsed < MIN_ROUND_MS);
  return elapsed / calls;
}

/** {@link cpuRound} for work that returns a promise (each call is awaited). */
async function cpuRoundAsync(clock: ThreadClock, run: () => Promise<unknown>): Promise<number> {
  const started = clock.ms();
  let calls = 0;
  let elapsed = 0;
  do {
    await run();
    calls++;
    elapsed = clock.ms() - started;
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
  const clock = threadClock();
  try {
    let smallBest = Infinity;
    for (let i = 0; i < rounds; i++) smallBest = Math.min(smallBest, cpuRound(clock, small));
    let ratio = Infinity;
    for (let i = 0; i < rounds && !(ratio < bound); i++) {
      ratio = Math.min(ratio, cpuRound(clock, large) / smallBest);
    }
    return { ratio, linear: ratio < bound };
  } finally {
    clock.close();
  }
}

/**
 * {@link cpuGrowth} for work that returns a promise. Work done off the test's thread (in a worker,
 * a subprocess or by the runtime's own threads) is not counted: time work that runs on it.
 */
export async function cpuGrowthAsync(
  small: () => Promise<unknown>,
  large: () => Promise<unknown>,
  bound: number,
  rounds = 5,
): Promise<Growth> {
  for (let i = 0; i < 3; i++) await small();
  await large();
  const clock = threadClock();
  try {
    let smallBest = Infinity;
    for (let i = 0; i < rounds; i++) {
      smallBest = Math.min(smallBest, await cpuRoundAsync(clock, small));
    }
    let ratio = Infinity;
    for (let i = 0; i < rounds && !(ratio < bound); i++) {
      ratio = Math.min(ratio, await cpuRoundAsync(clock, large) / smallBest);
    }
    return { ratio, linear: ratio < bound };
  } finally {
    clock.close();
  }
}
