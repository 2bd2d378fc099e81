/** Observability of the gateway: Prometheus metrics. */
export { createMetrics, LATENCY_BUCKETS, type Metrics, type MetricsOptions } from "./metrics.ts";
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
