/** The route POST /api/gateway/status: Report health and status (software version, uptime, pipelines, error counts, alerts). */
import type { Context } from "hono";
import { z } from "zod";
import { iso } from "../../clock.ts";
import type { StatusReport } from "../../store/mod.ts";
import { readJson } from "../body.ts";
import type { AppEnv } from "../env.ts";
import { ApiError } from "../errors.ts";
import { machineOf } from "../middleware.ts";
import { ability, GATEWAY_ID, machine } from "./common.ts";
import { type Route, route } from "../registry.ts";
import { STATUS_ALERT_LIMITS } from "../../../shared/mod.ts";

/** What a gateway may send as an alert's rule name, kind and summary (untrusted input). */
const ALERT_NAME = new RegExp(`^[A-Za-z0-9][A-Za-z0-9_-]{0,${STATUS_ALERT_LIMITS.name - 1}}$`);
const ALERT_KIND = new RegExp(`^[a-z][a-z_]{0,${STATUS_ALERT_LIMITS.name - 1}}$`);
// deno-lint-ignore no-control-regex
const ONE_LINE = /^[^\x00-\x1f\x7f]*$/;

const statusBody = z.strictObject({
  health: z.enum(["healthy", "degraded", "unhealthy"]),
  software_version: z.string().min(1).max(100),
  uptime_secs: z.number().min(0),
  config_version: z.int().min(0).nullable().default(null),
  pipelines: z.array(
    z.strictObject({
      name: z.string().max(100),
      requests: z.int().min(0),
      errors: z.int().min(0),
      /** Cumulative milliseconds spent on the pipeline's requests (mean latency over time). */
      duration_ms_sum: z.number().min(0).optional(),
    }),
  ).max(500).default([]),
  error_counts: z.record(z.string().max(100), z.int().min(0)).default({}),
  checks: z.array(z.strictObject({
    name: z.string().max(100),
    status: z.enum(["pass", "warn", "fail"]),
    message: z.string().max(1000).optional(),
  })).max(100).default([]),
  /** The gateway's operations console, shown as a link (http or https only). */
  console_url: z.string().max(2000).refine(
    (v) => URL.canParse(v) && /^https?:$/.test(new URL(v).protocol),
    "an http:// or https:// URL",
  ).optional(),
  /** The gateway's alerts (gateway/alerts): metadata only, bounded (STATUS_ALERT_LIMITS). */
  alerts: z.array(z.strictObject({
    rule: z.string().regex(ALERT_NAME, "a rule name: letters, digits, `_` and `-`"),
    kind: z.string().regex(ALERT_KIND, "a rule kind: lowercase letters and `_`"),
    severity: z.enum(["critical", "warning", "info"]),
    since: z.iso.datetime(),
    resolved_at: z.iso.datetime().nullable(),
    summary: z.string().max(STATUS_ALERT_LIMITS.summary).regex(
      ONE_LINE,
      "one line without control characters",
    ),
  })).max(STATUS_ALERT_LIMITS.count).optional(),
});

/** POST /api/gateway/status: its documentation, its middleware and its handler. */
export const reportStatusRoute: Route = route(
  {
    method: "post",
    path: "/api/gateway/status",
    tag: "Gateway sync",
    summary: "Report health and status (software version, uptime, pipelines, error counts)",
    auth: ["machine"],
    body: {
      schema: statusBody,
      example: {
        health: "healthy",
        software_version: "0.12.0",
        uptime_secs: 86400,
        config_version: 3,
        pipelines: [{ name: "fhir_ingest", requests: 1520, errors: 3 }],
        error_counts: { backend_timeout: 2, payload_too_large: 1 },
        checks: [{ name: "pacs", status: "pass" }],
        alerts: [{
          rule: "pacs_dead",
          kind: "dead_letters",
          severity: "critical",
          since: "2025-01-16T07:58:00.000Z",
          resolved_at: null,
          summary: "queue pacs holds 3 dead letters",
        }],
      },
    },
    responses: {
      200: {
        description: "Recorded; the gateway's derived status",
        example: {
          gateway_id: GATEWAY_ID,
          status: "online",
          last_seen_at: "2025-01-16T08:01:00.000Z",
        },
      },
    },
  },
  machine,
  ability("status:write"),
  reportStatus,
);

/**
 * POST /api/gateway/status:
 * Report health and status (software version, uptime, pipelines, error counts).
 */
async function reportStatus(c: Context<AppEnv>): Promise<Response> {
  const s = c.get("services");
  const m = machineOf(c);
  const body = await readJson(c, statusBody);
  if (Object.keys(body.error_counts).length > 200) {
    throw new ApiError(422, "validation_failed", "error_counts: at most 200 keys", {
      fields: [{ field: "error_counts", message: "at most 200 keys" }],
    });
  }
  const now = s.options.clock.now();
  const report: StatusReport = { ...body, reported_at: iso(now) };
  await s.store.gatewayState.reportStatus(m.teamId, m.gatewayId, report);
  await s.store.statusSeries.add(m.teamId, m.gatewayId, {
    at: now,
    uptime_secs: body.uptime_secs,
    health: body.health,
    pipelines: body.pipelines,
  });
  const view = await s.resources.gatewayView(
    (await s.store.repos.gateways.get(m.teamId, m.gatewayId))!,
  );
  return c.json({
    gateway_id: m.gatewayId,
    status: view.status,
    last_seen_at: view.last_seen_at,
  });
}
