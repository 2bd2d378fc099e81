/** Time source of the cloud service; tests move a manual clock instead of sleeping. */
export { type Clock, ManualClock, sleep, systemClock, timeoutSignal } from "../shared/mod.ts";

/** ISO 8601 text of `ms`. */
export function iso(ms: number): string {
  return new Date(ms).toISOString();
}
