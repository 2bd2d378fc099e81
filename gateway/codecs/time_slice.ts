/**
 * Time slices for long synchronous work (parsing a large body): the work runs in steps, and
 * between steps `pause()` hands the event loop back once the current slice has used its budget,
 * so other requests are served while a large body is parsed.
 */

/**
 * Milliseconds of work per slice. A step (one chunk of input) may run past the budget before the
 * next `pause()`, so a step must stay small; a yield costs about 2 ms (a timer turn), so with 10 ms
 * slices a body that needs 400 ms of parsing takes about 20% longer and never holds the loop.
 */
export const SLICE_MS = 10;

/** Yields to the event loop between steps once a slice's budget is spent. */
export class TimeSlice {
  #started = performance.now();

  /** A slicer whose slices last about `budgetMs` milliseconds. */
  constructor(readonly budgetMs: number = SLICE_MS) {}

  /** Let other tasks run when this slice has used its budget; else return at once. */
  async pause(): Promise<void> {
    if (performance.now() - this.#started < this.budgetMs) return;
    // A timer task, not a microtask: I/O and other requests get their turn before we go on.
    await new Promise((resolve) => setTimeout(resolve, 0));
    this.#started = performance.now();
  }
}
