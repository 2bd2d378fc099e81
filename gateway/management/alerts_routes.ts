/**
 * The alerts in the management API: `GET /{prefix}/alerts` lists the alerts firing now, the
 * latest resolved ones and each channel's figures (queued, sent, failed, dropped, the last error
 * without secrets). Metadata only: rule, kind, severity, since, resolved, summary and subjects
 * (names and figures of the gateway's own state, never message content). Any role may read it.
 */
import type { Hono } from "hono";
import type { GatewayControl } from "./control.ts";
import type { ManagementEnv } from "./request_context.ts";
import { fail } from "./responses.ts";
import { PREFIXED } from "./routing.ts";

/** Adds the `/{prefix}/alerts` route. */
export function alertRoutes(app: Hono<ManagementEnv>, control: GatewayControl): void {
  app.get(`${PREFIXED}/alerts`, (c) => {
    const state = c.req.query("state") ?? "all";
    if (state !== "all" && state !== "active" && state !== "recent") {
      return fail(c, 400, "invalid_request", "state is all, active or recent");
    }
    const view = control.alerts?.() ??
      { enabled: false, evaluated_at: null, active: [], recent: [], channels: [] };
    return c.json({
      ...view,
      active: state === "recent" ? [] : view.active,
      recent: state === "active" ? [] : view.recent,
    });
  });
}
