/**
 * Group commit, the way a database commits: records of concurrent requests gather into one batch,
 * and batches are written one at a time, in the order their records came. A record whose answer
 * must wait for it holds the promise of its batch, which settles when the batch's write (and
 * fdatasync) has ended: fulfilled when it is on disk, rejected with the writer's error when not.
 *
 * A batch with waiters is written `delayMs` after its first record when the writer is idle (0:
 * with the records of the same turn of the event loop), at once when it reaches `maxBatch`, and,
 * while a write runs, as soon as that write ends: under load the batch is whatever arrived during
 * one fdatasync, so the number of fdatasyncs per second stays bounded by the disk, not by the
 * request rate. A batch without waiters (`batched` durability) waits for `flush` (the trail's
 * interval timer) or `maxBatch`.
 */

/** How a {@link GroupCommit} writes and when. */
export interface GroupCommitOptions<T> {
  /** Writes one batch (never two at once); throws when it was not written. */
  write(batch: T[]): Promise<void>;
  /** Milliseconds a batch with waiters gathers when no write is running. */
  delayMs(): number;
  /** A batch this large is written without waiting. */
  maxBatch: number;
  /** True when the writer has something of its own to write even with no records queued. */
  owed?(): boolean;
}

/** One batch being gathered: its records and, when some answer waits for it, its promise. */
interface Batch<T> {
  items: T[];
  done?: PromiseWithResolvers<void>;
  /** Set when it reached `maxBatch`: its flush is asked for once. */
  full?: boolean;
}

/** Batches of records written in order, each settling the promise its waiters hold. */
export class GroupCommit<T> {
  readonly #options: GroupCommitOptions<T>;
  #open: Batch<T> = { items: [] };
  #writing: Promise<void> | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** A start of the gathered batch is scheduled (timer or microtask). */
  #scheduled = false;

  /** A group commit writing through `options.write`. */
  constructor(options: GroupCommitOptions<T>) {
    this.#options = options;
  }

  /** Records gathered and not yet being written. */
  get length(): number {
    return this.#open.items.length;
  }

  /**
   * Adds `items` to the batch being gathered (all to the same one, in order). With `wait`, the
   * promise of that batch's write; else undefined.
   */
  add(items: readonly T[], wait: boolean): Promise<void> | undefined {
    const batch = this.#open;
    for (const item of items) batch.items.push(item);
    let promise: Promise<void> | undefined;
    if (wait) {
      if (!batch.done) {
        batch.done = Promise.withResolvers<void>();
        // Marked handled: a batch whose waiters all left must not end the process when it fails.
        batch.done.promise.catch(() => {});
        this.#schedule();
      }
      promise = batch.done.promise;
    }
    if (!batch.full && batch.items.length >= this.#options.maxBatch) {
      batch.full = true;
      void this.flush();
    }
    return promise;
  }

  /** Starts the delay of a batch with waiters, unless a running write will start it. */
  #schedule(): void {
    if (this.#scheduled || this.#writing) return;
    this.#scheduled = true;
    const start = () => {
      this.#scheduled = false;
      this.#timer = undefined;
      void this.flush();
    };
    const delay = this.#options.delayMs();
    // A 0 ms timer still waits for the runtime's next timer tick (2 ms measured in the gateway):
    // without a delay the batch gathers what this turn of the event loop ends, in a microtask.
    if (delay > 0) this.#timer = setTimeout(start, delay);
    else queueMicrotask(start);
  }

  /**
   * Writes the batch gathered now, after the write already running; resolves when it has been
   * written or has failed (its waiters see which; `flush` itself does not throw).
   */
  async flush(): Promise<void> {
    while (this.#writing) await this.#writing;
    const batch = this.#open;
    if (batch.items.length === 0 && !batch.done && !this.#options.owed?.()) return;
    this.#open = { items: [] };
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#scheduled = false;
    const writing = this.#commit(batch).finally(() => {
      this.#writing = undefined;
      // Records that came while this batch was written have waited one write already.
      if (this.#open.done) void this.flush();
    });
    this.#writing = writing;
    await writing;
  }

  /** Writes `batch` and settles its waiters; never throws. */
  async #commit(batch: Batch<T>): Promise<void> {
    try {
      await this.#options.write(batch.items);
      batch.done?.resolve();
    } catch (err) {
      batch.done?.reject(err);
    }
  }
}
