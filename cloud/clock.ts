/** Time source of the cloud service; tests move a manual clock instead of sleeping. */

/** Current time in milliseconds since the epoch. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

/** The system clock. */
export const systemClock: Clock = { now: () => Date.now() };

/** A clock that follows the system clock plus an offset that tests advance. */
export class ManualClock implements Clock {
  #offset = 0;

  /** Now, shifted by every `advance` so far. */
  now(): number {
    return Date.now() + this.#offset;
  }

  /** Moves time forward by `ms`. */
  advance(ms: number): void {
    this.#offset += ms;
  }
}

/** ISO 8601 text of `ms`. */
export function iso(ms: number): string {
  return new Date(ms).toISOString();
}
