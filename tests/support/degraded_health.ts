/**
 * A main thread's list of degraded components for unit tests: a debug logger whose JSON lines are
 * kept, the gateway's metrics, and the `gateway_component_degraded` gauge of a component.
 */
import { Logger } from "../../shared/mod.ts";
import { createMetrics, DegradedComponents } from "../../gateway/observability/mod.ts";
import { parseExposition, sampleValue } from "./metrics.ts";

/** A fresh DegradedComponents with its logger's lines, metrics and gauge reader. */
export function degradedHealth() {
  const lines: Record<string, unknown>[] = [];
  const logger = new Logger({
    level: "debug",
    format: "json",
    sink: (l) => lines.push(JSON.parse(l)),
  });
  const metrics = createMetrics();
  const health = new DegradedComponents({ logger, metrics: metrics.components });
  const gauge = (component: string) =>
    sampleValue(parseExposition(metrics.render()), "gateway_component_degraded", { component });
  return { lines, logger, metrics, health, gauge };
}
