/** The route DELETE /api/team/invitations/:id: Revoke an invitation of the current team (owners only). */
import type { Context } from "hono";
import type { AppEnv } from "../env.ts";
import { userOf } from "../middleware.ts";
import { auth, EXAMPLE, OWNERS_ONLY } from "./common.ts";
import { type Route, route } from "../registry.ts";

/** DELETE /api/team/invitations/: its documentation, its middleware and its handler. */
export const revokeInvitationRoute: Route = route(
  {
    method: "delete",
    path: "/api/team/invitations/:id",
    tag: "Teams",
    summary: "Revoke an invitation of the current team (owners only)",
    description: "A used or ended invitation is answered as it is.",
    auth: ["user_token", "api_token"],
    responses: {
      200: {
        description: "Revoked",
        example: {
          ...EXAMPLE,
          state: "revoked",
          revoked_at: "2025-01-17T09:00:00.000Z",
          revoked_by: "ada@example.com",
        },
      },
      403: OWNERS_ONLY,
      404: {
        description: "No such invitation in this team",
        example: { error: { code: "not_found", message: "invitation not found" } },
      },
    },
  },
  auth,
  revokeInvitation,
);

/** DELETE /api/team/invitations/:id: Revoke an invitation of the current team (owners only). */
async function revokeInvitation(c: Context<AppEnv>): Promise<Response> {
  const s = c.get("services");
  const revoked = await s.invitations.revoke(userOf(c), c.req.param("id")!);
  return c.json(s.invitations.view(revoked));
}
