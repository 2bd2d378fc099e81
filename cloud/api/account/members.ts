/** The route GET /api/team/members: Members of the current team. */
import type { Context } from "hono";
import type { AppEnv } from "../env.ts";
import { userOf } from "../middleware.ts";
import { auth, USER_AUTH, USER_EXAMPLE } from "./common.ts";
import { type Route, route } from "../registry.ts";

/** GET /api/team/members: its documentation, its middleware and its handler. */
export const membersRoute: Route = route(
  {
    method: "get",
    path: "/api/team/members",
    tag: "Teams",
    summary: "Members of the current team",
    auth: [...USER_AUTH],
    responses: {
      200: {
        description: "Members",
        example: {
          items: [{
            user: { id: USER_EXAMPLE.id, email: USER_EXAMPLE.email, name: USER_EXAMPLE.name },
            role: "owner",
            since: USER_EXAMPLE.created_at,
          }],
        },
      },
    },
  },
  auth,
  members,
);

/** GET /api/team/members: Members of the current team. */
async function members(c: Context<AppEnv>): Promise<Response> {
  const s = c.get("services");
  const p = userOf(c);
  const members = await s.store.identity.members(p.team.id);
  return c.json({
    items: members.map((m) => ({
      user: { id: m.user.id, email: m.user.email, name: m.user.name },
      role: m.role,
      since: m.since,
    })),
  });
}
