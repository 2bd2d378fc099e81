/** The route GET /api/gateway/transforms/:id: Download a transform (JOLT spec) that the gateway's configuration uses. */
import type { Context } from "hono";
import { transformText } from "../../resources/mod.ts";
import type { AppEnv } from "../env.ts";
import { notFound } from "../errors.ts";
import { machineOf } from "../middleware.ts";
import { ability, machine, matches } from "./common.ts";
import { type Route, route } from "../registry.ts";

/** GET /api/gateway/transforms/: its documentation, its middleware and its handler. */
export const downloadTransformRoute: Route = route(
  {
    method: "get",
    path: "/api/gateway/transforms/:id",
    tag: "Gateway sync",
    summary: "Download a transform (JOLT spec) that the gateway's configuration uses",
    description:
      "Saved by the gateway as `<id>.json` under `transforms_path`. Only transforms of the gateway's current configuration are served. ETag/If-None-Match supported.",
    auth: ["machine"],
    responses: {
      200: {
        description: "The spec (JSON)",
        contentType: "application/json",
        example: [{ operation: "shift", spec: { name: "patient.name" } }],
      },
      304: { description: "Not modified" },
      404: {
        description: "Not a transform of this gateway's configuration",
        example: { error: { code: "not_found", message: "transform not found" } },
      },
    },
  },
  machine,
  ability("transforms:read"),
  downloadTransform,
);

/**
 * GET /api/gateway/transforms/:id:
 * Download a transform (JOLT spec) that the gateway's configuration uses.
 */
async function downloadTransform(c: Context<AppEnv>): Promise<Response> {
  const s = c.get("services");
  const m = machineOf(c);
  const id = c.req.param("id")!;
  const config = await s.resources.gatewayConfig(m.teamId, m.gatewayId);
  const needed = config.transforms.find((t) => t.id === id);
  if (!needed) throw notFound("transform");
  // A rolled-back gateway gets the transform as it was at that version.
  const pinnedText = config.transformTexts?.[id];
  if (pinnedText !== undefined) {
    const etag = `"${needed.sha256.slice(0, 32)}"`;
    c.header("ETag", etag);
    if (matches(c.req.header("if-none-match"), etag)) return c.body(null, 304);
    return c.body(pinnedText, 200, { "Content-Type": "application/json; charset=utf-8" });
  }
  const t = await s.store.repos.transforms.get(m.teamId, id);
  if (!t) throw notFound("transform");
  const etag = `"${t.sha256.slice(0, 32)}"`;
  c.header("ETag", etag);
  if (matches(c.req.header("if-none-match"), etag)) return c.body(null, 304);
  return c.body(transformText(t.spec), 200, {
    "Content-Type": "application/json; charset=utf-8",
  });
}
