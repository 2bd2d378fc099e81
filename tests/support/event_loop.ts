/**
 * How long a piece of work holds the event loop: a timer chain ticks beside the work, and the
 * longest gap between two ticks (or between the last tick and the work's end) is the longest time
 * no other task could run. Work that hands the loop back between slices shows short gaps; one
 * synchronous run shows its whole duration.
 *
 * A gap counts only the CPU time this thread had in it (`CLOCK_THREAD_CPUTIME_ID`, cpu_scaling.ts):
 * on a loaded machine the thread also waits for a core, and that wait is the machine's, not the
 * work's (a test job beside it must not make slicing look broken). Not the process's CPU time
 * either: `deno test --parallel` runs the other test files as threads of this process. Work that
 * holds the loop runs on this thread the whole time, so its gap is all CPU time.
 */
import { threadClock } from "./cpu_scaling.ts";

/** The outcome of the work and the longest stall, in milliseconds. */
export interface StallMeasure<T> {
  /** The work's result, when it resolved. */
  value?: T;
  /** What the work threw or rejected with, if it did. */
  error?: unknown;
  /** Longest CPU time this thread spent between two turns of the event loop while the work ran. */
  stallMs: number;
}

/** Run `work` with a ticking timer beside it and report the longest event-loop stall. */
export async function measureStall<T>(work: () => Promise<T> | T): Promise<StallMeasure<T>> {
  const clock = threadClock();
  const cpuMs = () => clock.ms();
  let last = performance.now();
  let lastCpu = cpuMs();
  let longest = 0;
  let running = true;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const gap = () => {
    const now = performance.now();
    const cpu = cpuMs();
    const held = Math.min(now - last, cpu - lastCpu);
    [last, lastCpu] = [now, cpu];
    return held;
  };
  const tick = () => {
    longest = Math.max(longest, gap());
    if (running) timer = setTimeout(tick, 0);
  };
  timer = setTimeout(tick, 0);
  const out: StallMeasure<T> = { stallMs: 0 };
  try {
    out.value = await work();
  } catch (e) {
    out.error = e;
  } finally {
    running = false;
    clearTimeout(timer);
  }
  // The stretch after the last tick counts too: the work's final synchronous part.
  out.stallMs = Math.max(longest, gap());
  clock.close();
  return out;
}

/**
 * The shortest of the longest stalls over `attempts` runs of `work` (and the last run's outcome).
 * A busy machine can pause a process at any moment; work that holds the loop itself stalls in
 * every run, so the best run tells the two apart.
 */
export async function bestStall<T>(
  work: () => Promise<T> | T,
  attempts = 3,
): Promise<StallMeasure<T>> {
  let best = Infinity;
  let last: StallMeasure<T> = { stallMs: Infinity };
  for (let i = 0; i < attempts; i++) {
    last = await measureStall(work);
    best = Math.min(best, last.stallMs);
  }
  return { ...last, stallMs: best };
}

/**
 * The turns of the event loop a timer chain saw while `work` ran, and its outcome: an order, not
 * a duration. Work that runs on this thread in one piece lets at most one turn through, whatever
 * the machine's load; work done elsewhere (a worker) lets the loop turn freely meanwhile.
 */
export async function loopTurnsDuring<T>(
  work: () => Promise<T>,
): Promise<{ value: T; turns: number }> {
  let turns = 0;
  let running = true;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const tick = () => {
    turns++;
    if (running) timer = setTimeout(tick, 0);
  };
  timer = setTimeout(tick, 0);
  try {
    return { value: await work(), turns };
  } finally {
    running = false;
    clearTimeout(timer);
  }
}
