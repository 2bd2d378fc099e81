/**
 * The status report a gateway sends to the cloud (`POST /api/gateway/status`): the gateway builds
 * it, the cloud stores it (with the time it arrived) and shows it.
 */

/** Body of `POST /api/gateway/status`. */
export interface GatewayStatusBody {
  health: "healthy" | "degraded" | "unhealthy";
  software_version: string;
  uptime_secs: number;
  config_version: number | null;
  /** Cumulative counters since start; `duration_ms_sum` is the time spent on those requests. */
  pipelines: { name: string; requests: number; errors: number; duration_ms_sum?: number }[];
  error_counts: Record<string, number>;
  checks: { name: string; status: "pass" | "warn" | "fail"; message?: string }[];
  /**
   * Alerts of the gateway (docs/operations.md, "Alerts"): the firing ones and the latest resolved
   * ones, metadata only (never message content). Absent from gateways without `[alerts]`.
   */
  alerts?: GatewayAlertSummary[];
  /**
   * Where operators' browsers reach the gateway's operations console (`[management]
   * console_url`): the cloud shows it as a link, and nothing of the console flows to the cloud.
   * Absent when not configured.
   */
  console_url?: string;
}

/** One alert as the status report carries it. */
export interface GatewayAlertSummary {
  /** The rule's name (`[alerts.rules.<name>]`). */
  rule: string;
  /** The rule's kind (`dead_letters`, `queue_age`, …). */
  kind: string;
  severity: "critical" | "warning" | "info";
  /** When it started firing (ISO 8601). */
  since: string;
  /** When it cleared (ISO 8601); null while it fires. */
  resolved_at: string | null;
  /** What holds, in one line: names and figures of the gateway's own state. */
  summary: string;
}

/** Bounds of the alerts in a status report: the gateway sends no more, the cloud accepts no more. */
export const STATUS_ALERT_LIMITS = {
  /** Alerts per report. */
  count: 50,
  /** Characters of a rule name or kind. */
  name: 64,
  /** Characters of a summary. */
  summary: 300,
} as const;
