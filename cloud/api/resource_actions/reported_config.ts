/** The route GET /api/gateways/:id/reported-config: The configuration the gateway uploaded last (TOML text). */
import type { Context } from "hono";
import type { AppEnv } from "../env.ts";
import { notFound } from "../errors.ts";
import { userOf } from "../middleware.ts";
import { AUTH, auth, ownGateway } from "./common.ts";
import { type Route, route } from "../registry.ts";

/** GET /api/gateways/: its documentation, its middleware and its handler. */
export const reportedConfigRoute: Route = route(
  {
    method: "get",
    path: "/api/gateways/:id/reported-config",
    tag: "Gateways",
    summary: "The configuration the gateway uploaded last (TOML text)",
    auth: [...AUTH],
    responses: {
      200: {
        description: "The TOML",
        contentType: "application/toml",
        example: '[endpoints.api]\nservice = "http"\n…',
      },
      404: {
        description: "No such gateway, or it never uploaded",
        example: { error: { code: "not_found", message: "reported configuration not found" } },
      },
    },
  },
  auth,
  reportedConfig,
);

/**
 * GET /api/gateways/:id/reported-config:
 * The configuration the gateway uploaded last (TOML text).
 */
async function reportedConfig(c: Context<AppEnv>): Promise<Response> {
  const s = c.get("services");
  const p = userOf(c);
  const gw = await ownGateway(s, p.team.id, c.req.param("id")!);
  const text = await s.store.gatewayState.reportedConfig(p.team.id, gw.id);
  if (text === null) throw notFound("reported configuration");
  return c.body(text, 200, { "Content-Type": "application/toml; charset=utf-8" });
}
