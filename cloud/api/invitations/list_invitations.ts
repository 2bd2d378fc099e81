/** The route GET /api/team/invitations: Invitations of the current team, newest first (owners only). */
import type { Context } from "hono";
import { INVITATION_STATES } from "../../store/mod.ts";
import type { AppEnv } from "../env.ts";
import { oneOf, PAGE_QUERY, pageParams } from "../list_params.ts";
import { userOf } from "../middleware.ts";
import { auth, EXAMPLE, OWNERS_ONLY } from "./common.ts";
import { type Route, route } from "../registry.ts";

/** GET /api/team/invitations: its documentation, its middleware and its handler. */
export const listInvitationsRoute: Route = route(
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
