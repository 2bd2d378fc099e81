/** The route POST /api/invitations/accept: Accept an invitation (user tokens; the account must have the invited address). */
import type { Context } from "hono";
import { z } from "zod";
import { StoreError } from "../../store/mod.ts";
import { readJson } from "../body.ts";
import type { AppEnv } from "../env.ts";
import { ApiError } from "../errors.ts";
import { userTokenOf } from "../middleware.ts";
import { auth, CODE_EXAMPLE, EXAMPLE } from "./common.ts";
import { type Route, route } from "../registry.ts";

const acceptBody = z.strictObject({ code: z.string().min(1).max(200) });

const GONE_CODES = {
  accepted: "invitation_used",
  revoked: "invitation_revoked",
  expired: "invitation_expired",
} as const;

/** POST /api/invitations/accept: its documentation, its middleware and its handler. */
export const acceptInvitationRoute: Route = route(
  {
    method: "post",
    path: "/api/invitations/accept",
    tag: "Teams",
    summary: "Accept an invitation (user tokens; the account must have the invited address)",
    description:
      "The caller joins the team with the invited role (a member keeps the role they have). The current team does not change.",
    auth: ["user_token"],
    body: { schema: acceptBody, example: { code: CODE_EXAMPLE } },
    responses: {
      200: {
        description: "Joined",
        example: {
          team: { id: EXAMPLE.team_id, name: "Radiology", role: "member" },
          already_member: false,
        },
      },
      403: {
        description: "Another account's invitation, or called with an API token",
        example: {
          error: {
            code: "forbidden",
            message:
              "this invitation is for grace@example.com; sign in with that account to accept it",
          },
        },
      },
      404: {
        description: "Unknown code",
        example: {
          error: {
            code: "not_found",
            message: "invitation not found: check the link, or ask for a new one",
          },
        },
      },
      410: {
        description:
          "Used (`invitation_used`), revoked (`invitation_revoked`) or expired (`invitation_expired`)",
        example: {
          error: {
            code: "invitation_used",
            message: "this invitation was already used; each invitation works once",
          },
        },
      },
    },
  },
  auth,
  acceptInvitation,
);

/**
 * POST /api/invitations/accept:
 * Accept an invitation (user tokens; the account must have the invited address).
 */
async function acceptInvitation(c: Context<AppEnv>): Promise<Response> {
  const s = c.get("services");
  const p = userTokenOf(c, "API tokens are bound to their team; accept with a user token");
  const body = await readJson(c, acceptBody);
  try {
    const joined = await s.invitations.accept(p.user, body.code.trim());
    return c.json({
      team: { id: joined.team.id, name: joined.team.name, role: joined.role },
      already_member: joined.alreadyMember,
    });
  } catch (err) {
    const state = err instanceof StoreError ? err.details?.state : undefined;
    if (state === "accepted" || state === "revoked" || state === "expired") {
      throw new ApiError(410, GONE_CODES[state], (err as Error).message);
    }
    throw err;
  }
}
