/** The route GET /api/teams: Teams the caller belongs to. */
import type { Context } from "hono";
import type { AppEnv } from "../env.ts";
import { userOf } from "../middleware.ts";
import { auth, TEAM_EXAMPLE, USER_AUTH } from "./common.ts";
import { type Route, route } from "../registry.ts";

/** GET /api/teams: its documentation, its middleware and its handler. */
export const teamsRoute: Route = route(
  {
    method: "get",
    path: "/api/teams",
    tag: "Teams",
    summary: "Teams the caller belongs to",
    auth: [...USER_AUTH],
    responses: { 200: { description: "Teams", example: { items: [TEAM_EXAMPLE] } } },
  },
  auth,
  teams,
);

/** GET /api/teams: Teams the caller belongs to. */
async function teams(c: Context<AppEnv>): Promise<Response> {
  const s = c.get("services");
  const p = userOf(c);
  const teams = await s.store.identity.teamsOf(p.user.id);
  return c.json({
    items: teams.map((t) => ({ id: t.team.id, name: t.team.name, role: t.role })),
  });
}
