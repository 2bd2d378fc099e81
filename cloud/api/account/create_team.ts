/** The route POST /api/teams: Create a team (the caller becomes its owner; the current team stays). */
import { z } from "zod";
import type { Context } from "hono";
import type { AppEnv } from "../env.ts";
import { readJson } from "../body.ts";
import { userTokenOf } from "../middleware.ts";
import { auth, TEAM_EXAMPLE } from "./common.ts";
import { type Route, route } from "../registry.ts";

const teamBody = z.strictObject({ name: z.string().trim().min(1).max(100) });

/** POST /api/teams: its documentation, its middleware and its handler. */
export const createTeamRoute: Route = route(
  {
    method: "post",
    path: "/api/teams",
    tag: "Teams",
    summary: "Create a team (the caller becomes its owner; the current team stays)",
    description:
      "The caller's current team does not change: switch with `PUT /api/me/current-team`.",
    auth: ["user_token"],
    body: { schema: teamBody, example: { name: "Cardiology" } },
    responses: {
      201: { description: "Created", example: { ...TEAM_EXAMPLE, name: "Cardiology" } },
    },
  },
  auth,
  createTeam,
);

/** POST /api/teams: Create a team (the caller becomes its owner; the current team stays). */
async function createTeam(c: Context<AppEnv>): Promise<Response> {
  const s = c.get("services");
  const p = userTokenOf(c, "API tokens are bound to their team; use a user token");
  const body = await readJson(c, teamBody);
  const team = await s.store.identity.createTeam(p.user, body.name);
  return c.json({ id: team.id, name: team.name, role: "owner" }, 201);
}
