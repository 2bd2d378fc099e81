/**
 * Observability of the gateway: Prometheus metrics.
 *
 * @module
 */
export {
  type CloudMetrics,
  type CloudPullOutcome,
  createMetrics,
  LATENCY_BUCKETS,
  type Metrics,
  type MetricsOptions,
  type MetricsSummary,
} from "./metrics.ts";
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
