/** The route GET /api/pipelines/:id/toml: The configuration of one pipeline on its own, for review. */
import type { Context } from "hono";
import type { AppEnv } from "../env.ts";
import { notFound } from "../errors.ts";
import { EXAMPLE_IDS } from "../examples.ts";
import { userOf } from "../middleware.ts";
import { AUTH, auth } from "./common.ts";
import { type Route, route } from "../registry.ts";

/** GET /api/pipelines/: its documentation, its middleware and its handler. */
export const pipelineTomlRoute: Route = route(
  {
    method: "get",
    path: "/api/pipelines/:id/toml",
    tag: "Pipelines",
    summary: "The configuration of one pipeline on its own, for review",
    auth: [...AUTH],
    responses: {
      200: {
        description: "TOML (null with problems when invalid)",
        example: {
          pipeline_id: EXAMPLE_IDS.pipelines,
          toml: "# Gateway configuration\n…",
          problems: [],
          transforms: [],
          skipped: [],
        },
      },
      404: {
        description: "No such pipeline in your team",
        example: { error: { code: "not_found", message: "pipeline not found" } },
      },
    },
  },
  auth,
  pipelineToml,
);

/** GET /api/pipelines/:id/toml: The configuration of one pipeline on its own, for review. */
async function pipelineToml(c: Context<AppEnv>): Promise<Response> {
  const s = c.get("services");
  const p = userOf(c);
  const pipeline = await s.store.repos.pipelines.get(p.team.id, c.req.param("id")!);
  if (!pipeline) throw notFound("pipeline");
  const config = await s.resources.pipelineConfig(p.team.id, pipeline);
  return c.json({
    pipeline_id: pipeline.id,
    toml: config.toml,
    problems: config.problems,
    transforms: config.transforms,
    skipped: config.skipped,
  });
}
