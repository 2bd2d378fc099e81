/** The route POST /api/gateway/config/apply: Report the outcome of applying a configuration version. */
import type { Context } from "hono";
import { z } from "zod";
import { iso } from "../../clock.ts";
import { readJson } from "../body.ts";
import type { AppEnv } from "../env.ts";
import { ApiError } from "../errors.ts";
import { machineOf } from "../middleware.ts";
import { ability, GATEWAY_ID, machine } from "./common.ts";
import { type Route, route } from "../registry.ts";

const applyBody = z.strictObject({
  version: z.int().min(1),
  status: z.enum(["applied", "failed"]),
  errors: z.array(
    z.strictObject({ path: z.string().max(500).optional(), message: z.string().max(2000) }),
  ).max(100).default([]),
});

/** POST /api/gateway/config/apply: its documentation, its middleware and its handler. */
export const reportApplyRoute: Route = route(
  {
    method: "post",
    path: "/api/gateway/config/apply",
    tag: "Gateway sync",
    summary: "Report the outcome of applying a configuration version",
    auth: ["machine"],
    body: {
      schema: applyBody,
      example: {
        version: 3,
        status: "failed",
        errors: [{ path: "backends.pacs.options.port", message: "connection refused" }],
      },
    },
    responses: {
      200: {
        description: "Recorded",
        example: {
          gateway_id: GATEWAY_ID,
          status: "degraded",
          applied_version: 2,
          last_apply: {
            version: 3,
            status: "failed",
            errors: [{ path: "backends.pacs.options.port", message: "connection refused" }],
            reported_at: "2025-01-16T08:00:05.000Z",
          },
        },
      },
      409: {
        description: "A version the cloud never issued",
        example: {
          error: {
            code: "unknown_version",
            message: "version 9 was never issued; the latest is 3",
          },
        },
      },
    },
  },
  machine,
  ability("config:report"),
  reportApply,
);

/** POST /api/gateway/config/apply: Report the outcome of applying a configuration version. */
async function reportApply(c: Context<AppEnv>): Promise<Response> {
  const s = c.get("services");
  const m = machineOf(c);
  const body = await readJson(c, applyBody);
  const current = await s.store.gatewayState.currentVersion(m.teamId, m.gatewayId);
  if (!current || body.version > current.version) {
    throw new ApiError(
      409,
      "unknown_version",
      `version ${body.version} was never issued; the latest is ${
        current?.version ?? "none (pull first)"
      }`,
    );
  }
  const reportedAt = iso(s.options.clock.now());
  await s.store.gatewayState.reportApply(m.teamId, m.gatewayId, {
    ...body,
    reported_at: reportedAt,
  });
  await s.store.configHistory.markApplied(
    m.teamId,
    m.gatewayId,
    body.version,
    body.status,
    reportedAt,
  );
  const view = await s.resources.gatewayView(
    (await s.store.repos.gateways.get(m.teamId, m.gatewayId))!,
  );
  return c.json({
    gateway_id: m.gatewayId,
    status: view.status,
    applied_version: view.applied_version,
    last_apply: view.last_apply,
  });
}
