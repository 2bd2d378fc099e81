/** The route DELETE /api/team/members/:userId: Remove a member from the current team (owners only; never the last owner). */
import type { Context } from "hono";
import type { AppEnv } from "../env.ts";
import { userOf } from "../middleware.ts";
import { auth, USER_AUTH } from "./common.ts";
import { type Route, route } from "../registry.ts";

/** DELETE /api/team/members/: its documentation, its middleware and its handler. */
export const removeMemberRoute: Route = route(
  {
    method: "delete",
    path: "/api/team/members/:userId",
    tag: "Teams",
    summary: "Remove a member from the current team (owners only; never the last owner)",
    auth: [...USER_AUTH],
    responses: {
      204: { description: "Removed" },
      404: {
        description: "Not a member",
        example: { error: { code: "not_found", message: "member not found" } },
      },
      409: {
        description: "Last owner",
        example: {
          error: {
            code: "conflict",
            message: "a team needs at least one owner; add another owner first",
          },
        },
      },
    },
  },
  auth,
  removeMember,
);

/**
 * DELETE /api/team/members/:userId:
 * Remove a member from the current team (owners only; never the last owner).
 */
async function removeMember(c: Context<AppEnv>): Promise<Response> {
  await c.get("services").teams.removeMember(userOf(c), c.req.param("userId")!);
  return c.body(null, 204);
}
