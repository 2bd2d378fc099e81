/**
 * The recorder of this isolate: a data-plane worker builds each configuration with the same one,
 * so its queue and its connection to the store outlive reloads.
 */
import type { Logger } from "../../shared/mod.ts";
import type { Metrics } from "../observability/mod.ts";
import { TrackingRecorder } from "./recorder.ts";

let current: TrackingRecorder | undefined;

/** This isolate's recorder (made on first use). */
export function isolateRecorder(
  logger: Logger,
  metrics: Pick<Metrics, "errorCode">,
): TrackingRecorder {
  return current ??= new TrackingRecorder({
    logger: logger.child({ component: "tracking" }),
    metrics,
  });
}
