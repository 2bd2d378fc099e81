/**
 * Invitations over REST: team owners invite an address (the answer carries the code and link,
 * once), list and revoke; the invited user accepts with a user token. The rules live in
 * resources/invitations.ts, shared with the web UI.
 */
import type { Context } from "hono";
import { z } from "zod";
import { INVITATION_DAYS, type InvitationView, MAX_INVITATION_DAYS } from "../resources/mod.ts";
import { INVITATION_STATES, StoreError } from "../store/mod.ts";
import { readJson } from "./body.ts";
import type { AppEnv } from "./env.ts";
import { ApiError } from "./errors.ts";
import { oneOf, PAGE_QUERY, pageParams } from "./list_params.ts";
import { requireBearer, userOf, userTokenOf } from "./middleware.ts";
import type { Registry } from "./registry.ts";

const inviteBody = z.strictObject({
  email: z.email().max(254),
  role: z.enum(["owner", "member"]).default("member"),
  expires_in_days: z.int().min(1).max(MAX_INVITATION_DAYS).default(INVITATION_DAYS),
});
const acceptBody = z.strictObject({ code: z.string().min(1).max(200) });

const EXAMPLE: InvitationView = {
  id: "0190f610-2222-7333-8444-555566667777",
  team_id: "0190f5d2-6a3c-7c1e-9a51-2b7d4c9e8f11",
  email: "grace@example.com",
  role: "member",
  created_at: "2025-01-16T09:00:00.000Z",
  created_by: "ada@example.com",
  expires_at: "2025-01-23T09:00:00.000Z",
  accepted_at: null,
  accepted_by: null,
  revoked_at: null,
  revoked_by: null,
  state: "pending",
};
const CODE_EXAMPLE = "gwi_pQ3x…";
const OWNERS_ONLY = {
  description: "The caller is not an owner of the team",
  example: { error: { code: "forbidden", message: "only team owners manage invitations" } },
};
const GONE_CODES = {
  accepted: "invitation_used",
  revoked: "invitation_revoked",
  expired: "invitation_expired",
} as const;

const auth = requireBearer("user_token", "api_token");

/** Mounts `/api/team/invitations` and `/api/invitations/accept`. */
export function mountInvitations(reg: Registry): void {
  reg.group("/api/team/invitations", (g) => {
    g.add(
      {
        method: "get",
        path: "/api/team/invitations",
        tag: "Teams",
        summary: "Invitations of the current team, newest first (owners only)",
        description:
          "`state` is `pending`, `accepted`, `revoked` or `expired`. The codes are never listed.",
        auth: ["user_token", "api_token"],
        query: [
          ...PAGE_QUERY,
          {
            name: "state",
            type: "string",
            description: `Only invitations in this state: ${INVITATION_STATES.join(", ")}.`,
          },
          {
            name: "email",
            type: "string",
            description: "Only invitations whose address contains this text.",
          },
        ],
        responses: {
          200: { description: "Invitations", example: { items: [EXAMPLE], next_cursor: null } },
          403: OWNERS_ONLY,
        },
      },
      auth,
      listInvitations,
    );
    g.add(
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
    g.add(
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
  });
  reg.group("/api/invitations", (g) => {
    g.add(
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
  });
}

/** GET /api/team/invitations: Invitations of the current team, newest first (owners only). */
async function listInvitations(c: Context<AppEnv>): Promise<Response> {
  const s = c.get("services");
  const page = await s.invitations.list(userOf(c), {
    ...pageParams(c),
    state: oneOf(c, "state", INVITATION_STATES),
    email: c.req.query("email") || undefined,
  });
  return c.json({
    items: page.items.map((r) => s.invitations.view(r)),
    next_cursor: page.next_cursor ?? null,
  });
}

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

/** DELETE /api/team/invitations/:id: Revoke an invitation of the current team (owners only). */
async function revokeInvitation(c: Context<AppEnv>): Promise<Response> {
  const s = c.get("services");
  const revoked = await s.invitations.revoke(userOf(c), c.req.param("id")!);
  return c.json(s.invitations.view(revoked));
}

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
