/** The route POST /api/shares: Share a record with another team (read, or read and write; never delete). */
import { shareCreate } from "../../resources/mod.ts";
import type { Context } from "hono";
import type { AppEnv } from "../env.ts";
import { readJson } from "../body.ts";
import { EXAMPLE_IDS } from "../examples.ts";
import { userOf } from "../middleware.ts";
import { AUTH, auth, SHARE_EXAMPLE } from "./common.ts";
import { type Route, route } from "../registry.ts";

/** POST /api/shares: its documentation, its middleware and its handler. */
export const createShareRoute: Route = route(
  {
    method: "post",
    path: "/api/shares",
    tag: "Shares",
    summary: "Share a record with another team (read, or read and write; never delete)",
    auth: [...AUTH],
    body: {
      schema: shareCreate,
      example: {
        resource_kind: "transforms",
        resource_id: EXAMPLE_IDS.transforms,
        team_id: SHARE_EXAMPLE.target_team_id,
        access: "read",
      },
    },
    responses: {
      201: { description: "Shared", example: SHARE_EXAMPLE },
      404: {
        description: "No such record in your team, or no such team",
        example: { error: { code: "not_found", message: "transform not found" } },
      },
      409: {
        description: "Already shared with that team",
        example: {
          error: {
            code: "conflict",
            message: "this record is already shared with that team; delete that share to change it",
          },
        },
      },
    },
  },
  auth,
  createShare,
);

/** POST /api/shares: Share a record with another team (read, or read and write; never delete). */
async function createShare(c: Context<AppEnv>): Promise<Response> {
  const s = c.get("services");
  const p = userOf(c);
  return c.json(await s.shares.share(p.team.id, p.actor, await readJson(c, shareCreate)), 201);
}
