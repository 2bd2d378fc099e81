/**
 * Prometheus metrics of the gateway: the `Metrics` contract (called by the executor and the
 * runtime) and its implementation over the small registry in `prometheus.ts`.
 */
import { type CounterCell, Registry } from "./prometheus.ts";

/** Metrics recorded by the data plane and rendered as Prometheus text by `GET /metrics`. */
export interface Metrics {
  /** A request entered a pipeline (in-flight gauge +1). */
  requestStarted(pipeline: string): void;
  /** A request left a pipeline (in-flight -1; counter and latency histogram by status). */
  requestFinished(pipeline: string, status: number, seconds: number): void;
  /** One backend call finished; `outcome` is `ok` or the error code. */
  backendCall(pipeline: string, backend: string, outcome: string, seconds: number): void;
  /** An error response was produced with this code. */
  errorCode(code: string): void;
  /** A configuration reload finished. */
  reload(ok: boolean): void;
  /** Prometheus text exposition format 0.0.4. */
  render(): string;
}

/** Upper bounds in seconds of the latency histograms (1 ms … 10 s). */
export const LATENCY_BUCKETS: readonly number[] = [
  0.001,
  0.0025,
  0.005,
  0.01,
  0.025,
  0.05,
  0.1,
  0.25,
  0.5,
  1,
  2.5,
  5,
  10,
];

/** Options of `createMetrics`. */
export interface MetricsOptions {
  /** Reported as `gateway_start_time_seconds`; defaults to the time of the call. */
  startedAt?: Date;
  /** Resident memory in bytes, read at scrape; defaults to `Deno.memoryUsage().rss`. */
  residentMemory?: () => number;
}

/** Create the gateway's metrics over a fresh registry. */
export function createMetrics(options: MetricsOptions = {}): Metrics {
  return new GatewayMetrics(options);
}

function denoRss(): number {
  return Deno.memoryUsage().rss;
}

/** The gateway's metric families over one Registry. */
class GatewayMetrics implements Metrics {
  readonly #registry = new Registry();
  readonly #requests = this.#registry.counter(
    "gateway_requests_total",
    "Requests that left a pipeline, by pipeline and HTTP status.",
    ["pipeline", "status"],
  );
  readonly #duration = this.#registry.histogram(
    "gateway_request_duration_seconds",
    "Time from entering a pipeline to the response, by pipeline.",
    ["pipeline"],
    LATENCY_BUCKETS,
  );
  readonly #inFlight = this.#registry.gauge(
    "gateway_requests_in_flight",
    "Requests currently inside a pipeline.",
    ["pipeline"],
  );
  readonly #backendCalls = this.#registry.counter(
    "gateway_backend_requests_total",
    "Backend calls, by pipeline, backend and outcome (ok or an error code).",
    ["pipeline", "backend", "outcome"],
  );
  readonly #backendDuration = this.#registry.histogram(
    "gateway_backend_duration_seconds",
    "Duration of backend calls, by pipeline and backend.",
    ["pipeline", "backend"],
    LATENCY_BUCKETS,
  );
  readonly #errors = this.#registry.counter(
    "gateway_errors_total",
    "Error responses produced by the gateway, by error code.",
    ["code"],
  );
  readonly #reloadOk: CounterCell;
  readonly #reloadFailed: CounterCell;

  constructor(options: MetricsOptions) {
    const reloads = this.#registry.counter(
      "gateway_config_reloads_total",
      "Configuration reloads, by outcome.",
      ["outcome"],
    );
    // Both outcomes exist from the start so that rate() and alerts see a zero, not a gap.
    this.#reloadOk = reloads.labels("success");
    this.#reloadFailed = reloads.labels("failure");

    const start = this.#registry.gauge(
      "gateway_start_time_seconds",
      "Start time of the gateway since the Unix epoch, in seconds.",
    );
    start.labels().set((options.startedAt ?? new Date()).getTime() / 1000);

    const rss = this.#registry.gauge(
      "process_resident_memory_bytes",
      "Resident memory size in bytes.",
    ).labels();
    const readRss = options.residentMemory ?? denoRss;
    this.#registry.onCollect(() => {
      try {
        rss.set(readRss());
      } catch {
        rss.set(NaN);
      }
    });
  }

  requestStarted(pipeline: string): void {
    this.#inFlight.labels(pipeline).inc();
  }

  requestFinished(pipeline: string, status: number, seconds: number): void {
    this.#inFlight.labels(pipeline).dec();
    this.#requests.labels(pipeline, status).inc();
    this.#duration.labels(pipeline).observe(seconds);
  }

  backendCall(pipeline: string, backend: string, outcome: string, seconds: number): void {
    this.#backendCalls.labels(pipeline, backend, outcome).inc();
    this.#backendDuration.labels(pipeline, backend).observe(seconds);
  }

  errorCode(code: string): void {
    this.#errors.labels(code).inc();
  }

  reload(ok: boolean): void {
    (ok ? this.#reloadOk : this.#reloadFailed).inc();
  }

  render(): string {
    return this.#registry.render();
  }
}
