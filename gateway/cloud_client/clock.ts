/** The time source of the cloud integration; tests share the cloud service's manual clock. */
export { type Clock, ManualClock, sleep, systemClock, timeoutSignal } from "../../shared/mod.ts";
