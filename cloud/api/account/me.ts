/** The route GET /api/me: The caller: user, current team, role, teams, and the credential used. */
import { publicUser } from "../../store/mod.ts";
import type { Context } from "hono";
import type { AppEnv } from "../env.ts";
import { userOf } from "../middleware.ts";
import { auth, TEAM_EXAMPLE, USER_AUTH, USER_EXAMPLE } from "./common.ts";
import { type Route, route } from "../registry.ts";

/** GET /api/me: its documentation, its middleware and its handler. */
export const meRoute: Route = route(
  {
    method: "get",
    path: "/api/me",
    tag: "Account",
    summary: "The caller: user, current team, role, teams, and the credential used",
    auth: [...USER_AUTH],
    responses: {
      200: {
        description: "The caller",
        example: {
          user: USER_EXAMPLE,
          team: TEAM_EXAMPLE,
          teams: [TEAM_EXAMPLE],
          credential: { kind: "user_token" },
        },
      },
      401: {
        description: "No valid token",
        example: { error: { code: "unauthorized", message: "token expired" } },
      },
    },
  },
  auth,
  me,
);

/** GET /api/me: The caller: user, current team, role, teams, and the credential used. */
async function me(c: Context<AppEnv>): Promise<Response> {
  const s = c.get("services");
  const p = userOf(c);
  const teams = await s.store.identity.teamsOf(p.user.id);
  return c.json({
    user: publicUser(p.user),
    team: { id: p.team.id, name: p.team.name, role: p.role },
    teams: teams.map((t) => ({ id: t.team.id, name: t.team.name, role: t.role })),
    credential: p.kind === "api_token"
      ? {
        kind: "api_token",
        id: p.apiToken!.id,
        name: p.apiToken!.name,
        expires_at: p.apiToken!.expires_at,
      }
      : { kind: p.kind },
  });
}
