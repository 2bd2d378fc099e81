/** The route DELETE /api/shares/:id: Revoke a share your team granted. */
import type { Context } from "hono";
import type { AppEnv } from "../env.ts";
import { userOf } from "../middleware.ts";
import { AUTH, auth } from "./common.ts";
import { type Route, route } from "../registry.ts";

/** DELETE /api/shares/: its documentation, its middleware and its handler. */
export const revokeShareRoute: Route = route(
  {
    method: "delete",
    path: "/api/shares/:id",
    tag: "Shares",
    summary: "Revoke a share your team granted",
    auth: [...AUTH],
    responses: {
      204: { description: "Revoked" },
      404: {
        description: "No such share of your team",
        example: { error: { code: "not_found", message: "share not found" } },
      },
    },
  },
  auth,
  revokeShare,
);

/** DELETE /api/shares/:id: Revoke a share your team granted. */
async function revokeShare(c: Context<AppEnv>): Promise<Response> {
  const s = c.get("services");
  const p = userOf(c);
  await s.shares.revoke(p.team.id, p.actor, c.req.param("id")!);
  return c.body(null, 204);
}
