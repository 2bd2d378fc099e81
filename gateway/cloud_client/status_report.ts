/**
 * The body of `POST /api/gateway/status`: health, software version, uptime, the applied cloud
 * configuration version, requests and 5xx answers per pipeline, error counts by code, one check
 * per backend target (its passive/active health) and one per delivery queue.
 */
import type { DegradedComponent, MetricsSummary, QueueSnapshot } from "../observability/mod.ts";
import type { GatewayAlertSummary } from "../../shared/mod.ts";
import type { StatusBody } from "./client.ts";

/** What a status report reads from the running gateway. */
export interface StatusSource {
  readonly version: string;
  readonly startedAt: Date;
  ready(): boolean;
  pipelines(): {
    name: string;
    backends: { name: string; targets: { name: string; healthy: boolean }[] }[];
  }[];
  readonly metrics: { summary(): MetricsSummary };
  /** Brings the data-plane workers' figures into `metrics` (before `summary()` is read). */
  collectMetrics?(): Promise<void>;
  /** The delivery queues' counters (docs/delivery.md), when the gateway has any. */
  queueStats?(): QueueSnapshot[];
  /** Components degraded by a disk that refuses writes (a paused queue). */
  degraded?(): DegradedComponent[];
  /** The running configuration: its `[management] console_url` goes into the report. */
  config?(): { management: { console_url?: string; console?: boolean } };
  /** Alerts firing and recently resolved, metadata only (gateway/alerts). */
  alertSummaries?(): GatewayAlertSummary[];
}

/**
 * A queue's check: `pass` while nothing waits on a failing destination; `warn` (the gateway is
 * `degraded`) while messages are being retried or dead letters wait for an operator; `fail`
 * (still `degraded`: the rest of the gateway serves) while its disk refuses writes.
 */
function queueCheck(q: QueueSnapshot): StatusBody["checks"][number] {
  const name = `queue/${q.backend}`.slice(0, 100);
  if (q.degraded) {
    return { name, status: "fail", message: `paused: ${q.degraded.reason}`.slice(0, 500) };
  }
  const retrying = q.retrying ?? 0;
  if (retrying === 0 && q.dead === 0) return { name, status: "pass" };
  return {
    name,
    status: "warn",
    message: `${q.depth} waiting (oldest ${Math.round(q.oldest_age_secs)} s), ${retrying} ` +
      `being retried, ${q.dead} dead letters`,
  };
}

/**
 * `healthy` when ready and every target is healthy; `degraded` when some target is down (or the
 * last pulled configuration failed to apply); `unhealthy` while not ready (starting, draining) or
 * when every target of a pipeline's primary backend is down.
 */
export function statusReport(
  source: StatusSource,
  configVersion: number | null,
  lastApplyFailed: boolean,
  now: number,
): StatusBody {
  const summary = source.metrics.summary();
  const alerts = source.alertSummaries?.() ?? [];
  const management = source.config?.().management;
  const consoleUrl = management?.console === false ? undefined : management?.console_url;
  const pipelines = source.pipelines();
  const checks: StatusBody["checks"] = [];
  let down = 0;
  let primaryDown = false;
  for (const p of pipelines) {
    p.backends.forEach((b, i) => {
      const targets = b.targets;
      for (const t of targets) {
        checks.push({
          name: `${p.name}/${b.name}/${t.name}`.slice(0, 100),
          status: t.healthy ? "pass" : "fail",
          ...(t.healthy ? {} : { message: "target marked down by health checks" }),
        });
        if (!t.healthy) down++;
      }
      if (i === 0 && targets.length > 0 && targets.every((t) => !t.healthy)) primaryDown = true;
    });
  }
  const queueChecks = (source.queueStats?.() ?? []).map(queueCheck);
  // Other degraded components (a queue has its check above already).
  const named = new Set(queueChecks.map((c) => c.name));
  for (const d of source.degraded?.() ?? []) {
    const name = d.component.slice(0, 100);
    if (named.has(name)) continue;
    queueChecks.push({ name, status: "fail", message: d.reason.slice(0, 500) });
  }
  const queueWarn = queueChecks.some((c) => c.status !== "pass");
  const health = !source.ready() || primaryDown
    ? "unhealthy"
    : down > 0 || lastApplyFailed || queueWarn
    ? "degraded"
    : "healthy";
  return {
    health,
    software_version: source.version,
    uptime_secs: Math.max(0, Math.floor((now - source.startedAt.getTime()) / 1000)),
    config_version: configVersion,
    // The cloud keeps at most 500 pipelines and 100 checks, names up to 100 characters.
    pipelines: pipelines.slice(0, 500).map((p) => ({
      name: p.name.slice(0, 100),
      requests: summary.pipelines[p.name]?.requests ?? 0,
      errors: summary.pipelines[p.name]?.errors ?? 0,
      duration_ms_sum: summary.pipelines[p.name]?.duration_ms_sum ?? 0,
    })),
    error_counts: summary.error_counts,
    // Queue checks first: a gateway with many targets still reports its queues.
    checks: [...queueChecks, ...checks].slice(0, 100),
    // Left out when there is none: a cloud that predates alerts accepts the report.
    ...(alerts.length ? { alerts } : {}),
    // The console's link only (the cloud shows it on the gateway's page); absent when unset.
    ...(consoleUrl ? { console_url: consoleUrl } : {}),
  };
}
