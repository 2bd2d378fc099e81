/** The time source of the cloud integration; tests share the cloud service's manual clock. */

/** Current time in milliseconds since the epoch. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

/** The system clock. */
export const systemClock: Clock = { now: () => Date.now() };
