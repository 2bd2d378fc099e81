/** The route PUT /api/me/current-team: Switch the current team (user tokens; answers a new user token for that team). */
import { z } from "zod";
import type { Context } from "hono";
import type { AppEnv } from "../env.ts";
import { readJson } from "../body.ts";
import { userTokenOf } from "../middleware.ts";
import { auth, TEAM_EXAMPLE } from "./common.ts";
import { type Route, route } from "../registry.ts";

const switchBody = z.strictObject({ team_id: z.uuid() });

/** PUT /api/me/current-team: its documentation, its middleware and its handler. */
export const switchTeamRoute: Route = route(
  {
    method: "put",
    path: "/api/me/current-team",
    tag: "Account",
    summary: "Switch the current team (user tokens; answers a new user token for that team)",
    description: "API tokens stay bound to the team they were created in and cannot switch.",
    auth: ["user_token"],
    body: { schema: switchBody, example: { team_id: TEAM_EXAMPLE.id } },
    responses: {
      200: {
        description: "Switched",
        example: {
          team: TEAM_EXAMPLE,
          access_token: "eyJhbGciOiJSUzI1NiIs…",
          expires_in: 86400,
        },
      },
      403: {
        description: "Called with an API token",
        example: {
          error: { code: "forbidden", message: "API tokens are bound to their team" },
        },
      },
      404: {
        description: "Not a member of that team",
        example: { error: { code: "not_found", message: "team not found" } },
      },
    },
  },
  auth,
  switchTeam,
);

/**
 * PUT /api/me/current-team:
 * Switch the current team (user tokens; answers a new user token for that team).
 */
async function switchTeam(c: Context<AppEnv>): Promise<Response> {
  const s = c.get("services");
  const p = userTokenOf(c, "API tokens are bound to their team; use a user token");
  const body = await readJson(c, switchBody);
  const user = await s.store.identity.switchTeam(p.user.id, body.team_id);
  const team = (await s.store.identity.team(body.team_id))!;
  const role = (await s.store.identity.membership(team.id, user.id))!.role;
  const ttl = s.options.userTokenTtlSeconds;
  const { token } = await s.jwt.issueUserToken(user, team, ttl);
  return c.json({
    team: { id: team.id, name: team.name, role },
    access_token: token,
    expires_in: ttl,
  });
}
