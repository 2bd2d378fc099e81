/** The route POST /api/team/members: Add an existing user to the current team, or change their role (owners only). */
import { z } from "zod";
import type { Context } from "hono";
import type { AppEnv } from "../env.ts";
import { readJson } from "../body.ts";
import { userOf } from "../middleware.ts";
import { auth, USER_AUTH } from "./common.ts";
import { type Route, route } from "../registry.ts";

const memberBody = z.strictObject({
  email: z.email(),
  role: z.enum(["owner", "member"]).default("member"),
});

/** POST /api/team/members: its documentation, its middleware and its handler. */
export const addMemberRoute: Route = route(
  {
    method: "post",
    path: "/api/team/members",
    tag: "Teams",
    summary: "Add an existing user to the current team, or change their role (owners only)",
    auth: [...USER_AUTH],
    body: { schema: memberBody, example: { email: "grace@example.com", role: "member" } },
    responses: {
      200: {
        description: "Added",
        example: { user_id: "0190f5d2-6a3c-7c1e-9a51-2b7d4c9e8f99", role: "member" },
      },
      403: {
        description: "Caller is not an owner",
        example: { error: { code: "forbidden", message: "only team owners manage members" } },
      },
      404: {
        description: "No user with that email",
        example: { error: { code: "not_found", message: "user not found" } },
      },
    },
  },
  auth,
  addMember,
);

/**
 * POST /api/team/members:
 * Add an existing user to the current team, or change their role (owners only).
 */
async function addMember(c: Context<AppEnv>): Promise<Response> {
  const body = await readJson(c, memberBody);
  const m = await c.get("services").teams.addMember(userOf(c), body.email, body.role);
  return c.json({ user_id: m.user_id, role: m.role });
}
