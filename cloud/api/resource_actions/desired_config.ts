/** The route GET /api/gateways/:id/config: The desired configuration of a gateway (what it pulls), for review. */
import type { Context } from "hono";
import type { AppEnv } from "../env.ts";
import { EXAMPLE_IDS } from "../examples.ts";
import { configEtag } from "../gateway_sync/mod.ts";
import { userOf } from "../middleware.ts";
import { AUTH, auth, GATEWAY_404, ownGateway } from "./common.ts";
import { type Route, route } from "../registry.ts";

/** GET /api/gateways/: its documentation, its middleware and its handler. */
export const desiredConfigRoute: Route = route(
  {
    method: "get",
    path: "/api/gateways/:id/config",
    tag: "Gateways",
    summary: "The desired configuration of a gateway (what it pulls), for review",
    auth: [...AUTH],
    responses: {
      200: {
        description:
          "The generated configuration and its version; `toml` is null and `problems` lists why when the records do not form a valid configuration",
        example: {
          gateway_id: EXAMPLE_IDS.gateways,
          version: 3,
          etag: '"9f2c…"',
          generated_at: "2025-01-16T08:00:00.000Z",
          toml: "# Gateway configuration\n…",
          problems: [],
          transforms: [],
          pipelines: ["fhir_ingest"],
          skipped: [],
        },
      },
      404: GATEWAY_404,
    },
  },
  auth,
  desiredConfig,
);

/**
 * GET /api/gateways/:id/config:
 * The desired configuration of a gateway (what it pulls), for review.
 */
async function desiredConfig(c: Context<AppEnv>): Promise<Response> {
  const s = c.get("services");
  const p = userOf(c);
  const gw = await ownGateway(s, p.team.id, c.req.param("id")!);
  const config = await s.resources.gatewayConfig(p.team.id, gw.id);
  return c.json({
    gateway_id: gw.id,
    version: config.version,
    etag: configEtag(config),
    generated_at: config.generated_at,
    toml: config.toml,
    problems: config.problems,
    transforms: config.transforms,
    pipelines: config.pipelines,
    skipped: config.skipped,
  });
}
