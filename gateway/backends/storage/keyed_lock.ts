/** Serializes work per key (a stored path) within this process. */
export class KeyedLock {
  readonly #tails = new Map<string, Promise<void>>();

  /** Run `fn` once every earlier `run` for the same key has settled. */
  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const tail = new Promise<void>((resolve) => release = resolve);
    const chained = previous.then(() => tail);
    this.#tails.set(key, chained);
    await previous;
    try {
      return await fn();
    } finally {
      release();
      if (this.#tails.get(key) === chained) this.#tails.delete(key);
    }
  }

  /** Keys with work queued or running (for tests). */
  get size(): number {
    return this.#tails.size;
  }
}
