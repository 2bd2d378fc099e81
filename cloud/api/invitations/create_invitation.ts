/** The route POST /api/team/invitations: Invite an e-mail address to the current team (owners only). */
import type { Context } from "hono";
import { z } from "zod";
import { INVITATION_DAYS, MAX_INVITATION_DAYS } from "../../resources/mod.ts";
import { readJson } from "../body.ts";
import type { AppEnv } from "../env.ts";
import { userOf } from "../middleware.ts";
import { auth, CODE_EXAMPLE, EXAMPLE, OWNERS_ONLY } from "./common.ts";
import { type Route, route } from "../registry.ts";

const inviteBody = z.strictObject({
  email: z.email().max(254),
  role: z.enum(["owner", "member"]).default("member"),
  expires_in_days: z.int().min(1).max(MAX_INVITATION_DAYS).default(INVITATION_DAYS),
});

/** POST /api/team/invitations: its documentation, its middleware and its handler. */
export const createInvitationRoute: Route = route(
  {
    method: "post",
    path: "/api/team/invitations",
    tag: "Teams",
    summary: "Invite an e-mail address to the current team (owners only)",
    description:
      `No e-mail is sent: pass \`url\` (or \`code\`) on to the invitee. They appear in this answer only; the invitation works once, for \`expires_in_days\` (default ${INVITATION_DAYS}, at most ${MAX_INVITATION_DAYS}), and only for the account with this address. A pending invitation to the same address is revoked by the new one.`,
    auth: ["user_token", "api_token"],
    body: {
      schema: inviteBody,
      example: { email: "grace@example.com", role: "member", expires_in_days: 7 },
    },
    responses: {
      201: {
        description: "Invited; `code` and `url` appear in this answer only",
        example: {
          ...EXAMPLE,
          code: CODE_EXAMPLE,
          url: `https://cloud.example.com/invitations/accept?code=${CODE_EXAMPLE}`,
        },
      },
      403: OWNERS_ONLY,
      409: {
        description: "The address belongs to a member already",
        example: {
          error: {
            code: "conflict",
            message: "grace@example.com is already a member of this team",
          },
        },
      },
    },
  },
  auth,
  createInvitation,
);

/** POST /api/team/invitations: Invite an e-mail address to the current team (owners only). */
async function createInvitation(c: Context<AppEnv>): Promise<Response> {
  const s = c.get("services");
  const body = await readJson(c, inviteBody);
  const issued = await s.invitations.invite(userOf(c), {
    email: body.email,
    role: body.role,
    expiresInDays: body.expires_in_days,
  });
  c.header("Cache-Control", "no-store");
  return c.json({ ...s.invitations.view(issued.record), code: issued.code, url: issued.url }, 201);
}
