/**
 * Observability of the gateway: Prometheus metrics, and the components degraded (not down) by a
 * disk that refuses writes.
 *
 * @example
 * ```ts
 * import { createMetrics } from "./mod.ts";
 *
 * const metrics = createMetrics();
 * metrics.requestStarted("fhir");
 * metrics.requestFinished("fhir", 200, 0.012);
 * console.log(metrics.summary().pipelines.fhir); // { requests: 1, errors: 0, in_flight: 0 }
 * console.log(metrics.render().includes("gateway_requests_total")); // true: Prometheus text
 * ```
 *
 * @module
 */
export {
  type AlertMetrics,
  type AssociationMetrics,
  type AuditMetrics,
  type AuditSinkName,
  type CloudMetrics,
  type CloudPullOutcome,
  type ComponentMetrics,
  createMetrics,
  type DataPlaneDelta,
  type IsolateMemory,
  LATENCY_BUCKETS,
  type MemoryMetrics,
  type Metrics,
  type MetricsOptions,
  type MetricsSummary,
  type PasswordMetrics,
  type QueueMetrics,
  type QueueSnapshot,
  type RateLimitMetrics,
  type WorkerMetrics,
} from "./metrics.ts";
export { type ComponentHealth, type DegradedComponent, DegradedComponents } from "./degraded.ts";
export {
  Counter,
  CounterCell,
  escapeHelp,
  escapeLabelValue,
  formatValue,
  Gauge,
  GaugeCell,
  Histogram,
  HistogramCell,
  type LabelValue,
  Registry,
} from "./prometheus.ts";
