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
}
