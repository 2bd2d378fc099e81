/**
 * Prometheus metrics of the gateway: the `Metrics` contract (called by the executor and the
 * runtime) and its implementation over the small registry in `prometheus.ts`.
 */
import { type CounterCell, type Family, type Gauge, Registry } from "./prometheus.ts";

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
  /** Per-pipeline and per-code totals so far (status reports to the cloud). */
  summary(): MetricsSummary;
  /** Metrics of the cloud integration. */
  readonly cloud: CloudMetrics;
  /** Metrics of the audit trail. */
  readonly audit: AuditMetrics;
  /** Metrics of the delivery queues. */
  readonly queues: QueueMetrics;
  /** Components degraded by a disk that refuses writes (degraded.ts). */
  readonly components: ComponentMetrics;
  /** Each isolate's V8 heap and memory budget (gateway/memory). */
  readonly memory: MemoryMetrics;
  /** The watchdog's view of the data-plane isolates (gateway/workers). */
  readonly workers: WorkerMetrics;
  /** Alerts firing and the notices of their channels (gateway/alerts). */
  readonly alerts: AlertMetrics;
  /** The DIMSE associations `dicom_scu` backends keep to their peers. */
  readonly associations: AssociationMetrics;
  /** The shared stores of `rate_limit` middleware (Redis). */
  readonly rateLimits: RateLimitMetrics;
  /** The password checks of `basic_auth` middleware. */
  readonly passwords: PasswordMetrics;
  /** Prometheus text exposition format 0.0.4. */
  render(): string;
  /**
   * A data-plane worker's figures since the last call (requests, latencies, backend calls,
   * error codes, in-flight), for the main thread to add with `addDataPlane`.
   */
  takeDataPlaneDelta(): DataPlaneDelta;
  /** Adds a worker's `takeDataPlaneDelta()` to these metrics. */
  addDataPlane(delta: DataPlaneDelta): void;
}

/** What `rate_limit` middleware with a shared store (Redis) count. */
export interface RateLimitMetrics {
  /** A request was decided by `policy` (on_store_error) because the store could not be asked. */
  storeError(middleware: string, policy: string): void;
}

/** What `basic_auth` middleware count. */
export interface PasswordMetrics {
  /**
   * A password was hashed (not answered from memory) against a hash with `parameters` (scheme and
   * cost, as `bcrypt cost=11`), for a user of the file (`known`) or against the decoy.
   */
  checked(middleware: string, known: boolean, parameters: string): void;
}

/** Data-plane figures of a worker, by metric family: each series' label values and numbers. */
export type DataPlaneDelta = Record<string, { values: (string | number)[]; data: number[] }[]>;

/** Totals read from the counters: requests and 5xx responses per pipeline, errors per code. */
export interface MetricsSummary {
  pipelines: Record<
    string,
    { requests: number; errors: number; in_flight: number; duration_ms_sum: number }
  >;
  error_counts: Record<string, number>;
}

/** Outcome of one configuration pull from the cloud service. */
export type CloudPullOutcome = "applied" | "failed" | "not_modified" | "error";

/** Metrics of the cloud integration (sync and machine-token state). */
export interface CloudMetrics {
  /** One configuration pull ended. */
  configPull(outcome: CloudPullOutcome): void;
  /** One status report was sent (or failed). */
  statusReport(ok: boolean): void;
  /** One machine-token renewal was tried. */
  tokenRenewal(ok: boolean): void;
  /** One transform download was tried. */
  transformDownload(ok: boolean): void;
  /** The machine token held now (its expiry, ms since the epoch), or null for none. */
  token(expiresAtMs: number | null): void;
  /** The version of the configuration pulled from the cloud that runs now, or null. */
  configVersion(version: number | null): void;
  /** The cloud service answered a call at `ms` (since the epoch). */
  contact(ms: number): void;
}

/** Where audit records go. */
export type AuditSinkName = "file" | "fhir" | "syslog";

/** Metrics of the audit trail (gateway/audit). */
export interface AuditMetrics {
  /** `n` records reached a sink. */
  written(sink: AuditSinkName, n: number): void;
  /** `n` records were lost: `queue_full`, `write_error`, `rejected` or `unsent_at_stop`. */
  dropped(sink: AuditSinkName, reason: string, n: number): void;
  /** Records waiting in memory for a sink. */
  queued(sink: AuditSinkName, n: number): void;
}

/** What the delivery queues report at each scrape. */
export interface QueueSnapshot {
  backend: string;
  depth: number;
  bytes: number;
  in_flight: number;
  /** Waiting after at least one failed attempt. */
  retrying?: number;
  dead: number;
  oldest_age_secs: number;
  delivered_total: number;
  retried_total: number;
  dead_lettered_total: number;
  /** Set while the queue is paused because its disk refuses writes. */
  degraded?: { reason: string; since: string } | null;
}

/** Metrics of the delivery queues: read from them at each scrape. */
export interface QueueMetrics {
  /** Where the figures come from (the gateway's queues). */
  source(read: () => QueueSnapshot[]): void;
}

/** The degraded state of the gateway's components (a queue paused by a full disk). */
export interface ComponentMetrics {
  /** `component` became degraded (`true`) or works again (`false`). */
  degraded(component: string, on: boolean): void;
}

/** One isolate's memory: its V8 heap, and the bodies it holds for parsing against its budget. */
export interface IsolateMemory {
  /** V8 heap in use, bytes. */
  heapUsed: number;
  /** V8 heap limit, bytes (past it the process ends). */
  heapLimit: number;
  /** Bytes of bodies held in memory for parsing and transforms. */
  buffered: number;
  /** The budget of such bytes (`[runtime] max_buffered_bytes`, else 1/8 of the heap limit). */
  budget: number;
}

/** Metrics of each isolate's memory, read from it when scraped (a worker: when collected). */
export interface MemoryMetrics {
  /** Where this isolate's figures come from (its data plane). */
  source(read: () => IsolateMemory): void;
}

/** What the watchdog reports of the data-plane isolates (0: the main thread). */
export interface WorkerMetrics {
  /** Isolate `index` stopped answering heartbeats (`true`; counted as a miss) or answers again. */
  unresponsive(index: number, on: boolean): void;
  /** A worker thread was replaced: it `failed` (an uncaught error) or was `unresponsive`. */
  replaced(reason: "failed" | "unresponsive"): void;
  /** Worker threads terminated by the watchdog whose thread still runs (Deno cannot stop it). */
  lingering(threads: number): void;
}

/** What the association pool of a `dicom_scu` backend reports (gateway/backends/dicom_scu). */
export interface AssociationMetrics {
  /** An association to the backend's peer was opened. */
  opened(backend: string): void;
  /** An idle association served another operation. */
  reused(backend: string): void;
  /** An operation was sent again after its association broke. */
  retried(backend: string): void;
  /** Open (idle or busy) and idle associations changed by these amounts. */
  changed(backend: string, open: number, idle: number): void;
}

/** What the alerts report (gateway/alerts). */
export interface AlertMetrics {
  /** Rule `rule` started (`true`) or stopped firing. */
  firing(rule: string, on: boolean): void;
  /** A notice of `channel` was `sent`, `failed` (after its retries), `dropped` or `retried`. */
  notice(channel: string, outcome: "sent" | "failed" | "dropped" | "retried"): void;
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

/**
 * This isolate's index: 0 for the main thread, N for the data-plane worker named
 * `gateway-worker-N` (gateway/workers), as `GET /{prefix}/workers` numbers them.
 */
function isolateIndex(): string {
  const name = (globalThis as { name?: string }).name ?? "";
  return /^gateway-worker-(\d+)$/.exec(name)?.[1] ?? "0";
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
  readonly #assocOpen = this.#registry.gauge(
    "gateway_dimse_associations_open",
    "DIMSE associations open to the peer of a dicom_scu backend (idle or busy), by backend.",
    ["backend"],
  );
  readonly #assocIdle = this.#registry.gauge(
    "gateway_dimse_associations_idle",
    "DIMSE associations kept idle for the next operation, by dicom_scu backend.",
    ["backend"],
  );
  readonly #assocOpened = this.#registry.counter(
    "gateway_dimse_associations_opened_total",
    "DIMSE associations opened to the peer, by dicom_scu backend.",
    ["backend"],
  );
  readonly #assocReused = this.#registry.counter(
    "gateway_dimse_associations_reused_total",
    "Operations served by an idle DIMSE association instead of a new one, by dicom_scu backend.",
    ["backend"],
  );
  readonly #assocRetried = this.#registry.counter(
    "gateway_dimse_operations_retried_total",
    "Idempotent DIMSE operations sent again on a new association after theirs broke, by " +
      "dicom_scu backend.",
    ["backend"],
  );
  readonly #rateLimitStoreErrors = this.#registry.counter(
    "gateway_rate_limit_store_errors_total",
    "Requests a rate_limit middleware decided without its store (Redis unreachable, timed " +
      "out), by middleware and the on_store_error policy applied (local, allow, deny).",
    ["middleware", "policy"],
  );
  readonly #passwordChecks = this.#registry.counter(
    "gateway_password_checks_total",
    "Passwords a basic_auth middleware hashed (answers it remembered are not counted), by " +
      "middleware, whether the user is in the file (known) or was checked against the decoy " +
      "(unknown), and the hash's scheme and cost.",
    ["middleware", "user", "parameters"],
  );
  /** The families a data-plane worker records, by name. */
  readonly #dataPlane: Family<unknown>[] = [
    this.#requests,
    this.#duration,
    this.#inFlight,
    this.#backendCalls,
    this.#backendDuration,
    this.#errors,
    this.#assocOpen,
    this.#assocIdle,
    this.#assocOpened,
    this.#assocReused,
    this.#assocRetried,
    this.#rateLimitStoreErrors,
    this.#passwordChecks,
  ] as Family<unknown>[];
  /** What the last `takeDataPlaneDelta` reported, by family name and series labels. */
  readonly #reported = new Map<string, number[]>();
  readonly #reloadOk: CounterCell;
  readonly #reloadFailed: CounterCell;
  readonly cloud: CloudMetrics;
  readonly audit: AuditMetrics;
  readonly queues: QueueMetrics;
  readonly components: ComponentMetrics;
  readonly memory: MemoryMetrics;
  readonly workers: WorkerMetrics;
  readonly alerts: AlertMetrics;
  readonly associations: AssociationMetrics = {
    opened: (backend) => this.#assocOpened.labels(backend).inc(),
    reused: (backend) => this.#assocReused.labels(backend).inc(),
    retried: (backend) => this.#assocRetried.labels(backend).inc(),
    changed: (backend, open, idle) => {
      if (open) this.#assocOpen.labels(backend).inc(open);
      if (idle) this.#assocIdle.labels(backend).inc(idle);
    },
  };
  readonly rateLimits: RateLimitMetrics = {
    storeError: (middleware, policy) => this.#rateLimitStoreErrors.labels(middleware, policy).inc(),
  };
  readonly passwords: PasswordMetrics = {
    checked: (middleware, known, parameters) =>
      this.#passwordChecks.labels(middleware, known ? "known" : "unknown", parameters).inc(),
  };
  /** The per-isolate memory gauges: a worker reports their values, not differences. */
  readonly #isolate: Gauge[];
  #readMemory: (() => IsolateMemory) | undefined;

  constructor(options: MetricsOptions) {
    const reloads = this.#registry.counter(
      "gateway_config_reloads_total",
      "Configuration reloads, by outcome.",
      ["outcome"],
    );
    // Both outcomes exist from the start so that rate() and alerts see a zero, not a gap.
    this.#reloadOk = reloads.labels("success");
    this.#reloadFailed = reloads.labels("failure");

    this.cloud = cloudMetrics(this.#registry);
    this.audit = auditMetrics(this.#registry);
    this.queues = queueMetrics(this.#registry);
    const degraded = this.#registry.gauge(
      "gateway_component_degraded",
      "1 while a component is degraded (a queue paused because its disk refuses writes), else 0.",
      ["component"],
    );
    this.components = { degraded: (c, on) => degraded.labels(c).set(on ? 1 : 0) };
    this.workers = workerMetrics(this.#registry);
    this.alerts = alertMetrics(this.#registry);

    const isolate = (name: string, help: string) =>
      this.#registry.gauge(
        name,
        `${help}, by isolate (worker 0: the main thread, then the data-plane workers).`,
        ["worker"],
      );
    this.#isolate = [
      isolate("gateway_heap_used_bytes", "V8 heap in use, in bytes"),
      isolate("gateway_heap_limit_bytes", "V8 heap limit (past it the process ends), in bytes"),
      isolate(
        "gateway_buffered_body_bytes",
        "Bytes of bodies held in memory to be parsed or transformed",
      ),
      isolate(
        "gateway_buffered_body_budget_bytes",
        "Budget of bytes of bodies held in memory; past it buffered requests get 503 memory_pressure",
      ),
    ];
    this.memory = { source: (read) => this.#readMemory = read };
    this.#registry.onCollect(() => this.#sampleMemory());

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
    this.#inFlight.labels1(pipeline).inc();
  }

  requestFinished(pipeline: string, status: number, seconds: number): void {
    this.#inFlight.labels1(pipeline).dec();
    this.#requests.labels2(pipeline, status).inc();
    this.#duration.labels1(pipeline).observe(seconds);
  }

  backendCall(pipeline: string, backend: string, outcome: string, seconds: number): void {
    this.#backendCalls.labels3(pipeline, backend, outcome).inc();
    this.#backendDuration.labels2(pipeline, backend).observe(seconds);
  }

  errorCode(code: string): void {
    this.#errors.labels(code).inc();
  }

  reload(ok: boolean): void {
    (ok ? this.#reloadOk : this.#reloadFailed).inc();
  }

  summary(): MetricsSummary {
    const pipelines: MetricsSummary["pipelines"] = {};
    const of = (name: string) =>
      pipelines[name] ??= { requests: 0, errors: 0, in_flight: 0, duration_ms_sum: 0 };
    for (const { values, cell } of this.#requests.series()) {
      const p = of(String(values[0]));
      p.requests += cell.value;
      if (Number(values[1]) >= 500) p.errors += cell.value;
    }
    for (const { values, cell } of this.#inFlight.series()) {
      of(String(values[0])).in_flight = cell.value;
    }
    for (const { values, cell } of this.#duration.series()) {
      of(String(values[0])).duration_ms_sum = Math.round(cell.sum * 1000);
    }
    const error_counts: Record<string, number> = {};
    for (const { values, cell } of this.#errors.series()) {
      error_counts[String(values[0])] = cell.value;
    }
    return { pipelines, error_counts };
  }

  render(): string {
    return this.#registry.render();
  }

  /** Sets this isolate's memory gauges from its source. */
  #sampleMemory(): void {
    if (!this.#readMemory) return;
    const m = this.#readMemory();
    const values = [m.heapUsed, m.heapLimit, m.buffered, m.budget];
    const index = isolateIndex();
    this.#isolate.forEach((family, i) => family.labels(index).set(values[i]));
  }

  takeDataPlaneDelta(): DataPlaneDelta {
    const out: DataPlaneDelta = {};
    // The memory gauges go as they are: they belong to this isolate alone.
    this.#sampleMemory();
    for (const family of this.#isolate) {
      const series = family.data().map(({ values, data }) => ({ values: [...values], data }));
      if (series.length) out[family.name] = series;
    }
    for (const family of this.#dataPlane) {
      const changed: DataPlaneDelta[string] = [];
      for (const { values, data } of family.data()) {
        const key = `${family.name}\0${values.join("\0")}`;
        const before = this.#reported.get(key);
        const delta = before ? data.map((v, i) => v - before[i]) : data;
        if (delta.some((v) => v !== 0)) changed.push({ values: [...values], data: delta });
        this.#reported.set(key, data);
      }
      if (changed.length) out[family.name] = changed;
    }
    return out;
  }

  addDataPlane(delta: DataPlaneDelta): void {
    for (const family of this.#dataPlane) {
      for (const { values, data } of delta[family.name] ?? []) family.add(values, data);
    }
    // A worker's memory gauges replace what it said before (a replaced worker starts afresh).
    for (const family of this.#isolate) {
      for (const { values, data } of delta[family.name] ?? []) {
        family.labels(...values).set(data[0]);
      }
    }
  }
}

/** The queue families, filled from the queues' own counters at each scrape. */
function queueMetrics(registry: Registry): QueueMetrics {
  const gauge = (name: string, help: string) => registry.gauge(name, help, ["backend"]);
  const depth = gauge("gateway_queue_depth", "Messages waiting for delivery, by backend.");
  const bytes = gauge("gateway_queue_bytes", "Bytes of the messages waiting, by backend.");
  const inFlight = gauge("gateway_queue_in_flight", "Deliveries running, by backend.");
  const dead = gauge("gateway_queue_dead_letters", "Dead-lettered messages held, by backend.");
  const age = gauge(
    "gateway_queue_oldest_age_seconds",
    "Age of the oldest waiting message, by backend (0: none).",
  );
  const counter = (name: string, help: string) => registry.counter(name, help, ["backend"]);
  const delivered = counter("gateway_queue_delivered_total", "Messages delivered, by backend.");
  const retried = counter(
    "gateway_queue_retried_total",
    "Failed attempts to be retried, by backend.",
  );
  const deadLettered = counter(
    "gateway_queue_dead_lettered_total",
    "Messages moved to the dead letters, by backend.",
  );
  const seen = new Map<string, { delivered: number; retried: number; dead: number }>();
  let read: () => QueueSnapshot[] = () => [];
  registry.onCollect(() => {
    for (const q of read()) {
      depth.labels(q.backend).set(q.depth);
      bytes.labels(q.backend).set(q.bytes);
      inFlight.labels(q.backend).set(q.in_flight);
      dead.labels(q.backend).set(q.dead);
      age.labels(q.backend).set(q.oldest_age_secs);
      // The queues count since they opened; the counters only ever go up by the difference.
      const last = seen.get(q.backend) ?? { delivered: 0, retried: 0, dead: 0 };
      const up = (cell: CounterCell, now: number, before: number) => {
        if (now > before) cell.inc(now - before);
      };
      up(delivered.labels(q.backend), q.delivered_total, last.delivered);
      up(retried.labels(q.backend), q.retried_total, last.retried);
      up(deadLettered.labels(q.backend), q.dead_lettered_total, last.dead);
      seen.set(q.backend, {
        delivered: Math.max(last.delivered, q.delivered_total),
        retried: Math.max(last.retried, q.retried_total),
        dead: Math.max(last.dead, q.dead_lettered_total),
      });
    }
  });
  return { source: (fn) => read = fn };
}

/** The alert families. */
function alertMetrics(registry: Registry): AlertMetrics {
  const firing = registry.gauge(
    "gateway_alert_firing",
    "1 while an alert rule's condition holds, by rule, else 0.",
    ["rule"],
  );
  const notices = registry.counter(
    "gateway_alert_notices_total",
    "Alert notices by channel and outcome: sent, retried (an attempt failed), failed (given up " +
      "after its retries), dropped (the channel's queue was full).",
    ["channel", "outcome"],
  );
  return {
    firing: (rule, on) => firing.labels(rule).set(on ? 1 : 0),
    notice: (channel, outcome) => notices.labels(channel, outcome).inc(),
  };
}

/** The watchdog's families. */
function workerMetrics(registry: Registry): WorkerMetrics {
  const unresponsive = registry.gauge(
    "gateway_worker_unresponsive",
    "1 while a data-plane isolate has not answered the watchdog's heartbeat for " +
      "`[runtime] watchdog_miss_ms`, by isolate (0: the main thread), else 0.",
    ["worker"],
  );
  const misses = registry.counter(
    "gateway_watchdog_misses_total",
    "Times a data-plane isolate became unresponsive, by isolate (0: the main thread).",
    ["worker"],
  );
  const replaced = registry.counter(
    "gateway_worker_replacements_total",
    "Data-plane worker threads replaced, by reason (failed, unresponsive).",
    ["reason"],
  );
  const lingering = registry.gauge(
    "gateway_worker_threads_lingering",
    "Data-plane worker threads terminated by the watchdog that still run (Deno's terminate() " +
      "does not stop synchronous JavaScript): each holds a core until its code returns.",
    [],
  );
  lingering.labels().set(0);
  // Both reasons exist from the start: an alert sees a zero, not a gap.
  const cells = {
    failed: replaced.labels("failed"),
    unresponsive: replaced.labels("unresponsive"),
  };
  return {
    unresponsive: (index, on) => {
      unresponsive.labels(index).set(on ? 1 : 0);
      if (on) misses.labels(index).inc();
    },
    replaced: (reason) => cells[reason].inc(),
    lingering: (threads) => lingering.labels().set(threads),
  };
}

/** The audit families. */
function auditMetrics(registry: Registry): AuditMetrics {
  const written = registry.counter(
    "gateway_audit_records_total",
    "Audit records written, by sink (file, fhir, syslog).",
    ["sink"],
  );
  const dropped = registry.counter(
    "gateway_audit_dropped_total",
    "Audit records lost, by sink and reason (queue_full, write_error, rejected, unsent_at_stop). Alert on any.",
    ["sink", "reason"],
  );
  const queued = registry.gauge(
    "gateway_audit_queue_depth",
    "Audit records waiting in memory, by sink.",
    ["sink"],
  );
  return {
    written: (sink, n) => written.labels(sink).inc(n),
    dropped: (sink, reason, n) => dropped.labels(sink, reason).inc(n),
    queued: (sink, n) => queued.labels(sink).set(n),
  };
}

/** The cloud families; every outcome label exists from the start (a zero, not a gap). */
function cloudMetrics(registry: Registry): CloudMetrics {
  const outcomes = <T extends string>(name: string, help: string, values: readonly T[]) => {
    const family = registry.counter(name, help, ["outcome"]);
    return Object.fromEntries(values.map((v) => [v, family.labels(v)])) as Record<T, CounterCell>;
  };
  const pulls = outcomes(
    "gateway_cloud_config_pulls_total",
    "Configuration pulls from the cloud service, by outcome (applied, failed, not_modified, error).",
    ["applied", "failed", "not_modified", "error"] as const,
  );
  const reports = outcomes(
    "gateway_cloud_status_reports_total",
    "Status reports sent to the cloud service, by outcome.",
    ["ok", "error"] as const,
  );
  const renewals = outcomes(
    "gateway_cloud_token_renewals_total",
    "Machine-token renewals, by outcome.",
    ["ok", "error"] as const,
  );
  const downloads = outcomes(
    "gateway_cloud_transform_downloads_total",
    "Transform downloads from the cloud service, by outcome.",
    ["ok", "error"] as const,
  );
  const authorized = registry.gauge(
    "gateway_cloud_authorized",
    "1 while the gateway holds a machine token, else 0.",
  ).labels();
  const expiry = registry.gauge(
    "gateway_cloud_token_expiry_timestamp_seconds",
    "Expiry of the held machine token since the Unix epoch, in seconds (0: none).",
  ).labels();
  const version = registry.gauge(
    "gateway_cloud_config_version",
    "Version of the configuration pulled from the cloud service that is running (0: none).",
  ).labels();
  const contact = registry.gauge(
    "gateway_cloud_last_contact_timestamp_seconds",
    "Last time the cloud service answered, since the Unix epoch, in seconds (0: never).",
  ).labels();
  const outcome = (ok: boolean) => ok ? "ok" : "error";
  return {
    configPull: (o) => pulls[o].inc(),
    statusReport: (ok) => reports[outcome(ok)].inc(),
    tokenRenewal: (ok) => renewals[outcome(ok)].inc(),
    transformDownload: (ok) => downloads[outcome(ok)].inc(),
    token: (ms) => {
      authorized.set(ms === null ? 0 : 1);
      expiry.set(ms === null ? 0 : ms / 1000);
    },
    configVersion: (v) => version.set(v ?? 0),
    contact: (ms) => contact.set(ms / 1000),
  };
}
