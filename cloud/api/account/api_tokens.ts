/** The route GET /api/tokens: API tokens of the current team (owners see all, members their own). */
import type { Context } from "hono";
import type { AppEnv } from "../env.ts";
import { userOf } from "../middleware.ts";
import { oneOf, PAGE_QUERY, pageParams } from "../list_params.ts";
import { auth, TOKEN_EXAMPLE, tokenView, USER_AUTH } from "./common.ts";
import { type Route, route } from "../registry.ts";

const TOKEN_STATES = ["active", "revoked", "expired"] as const;

/** GET /api/tokens: its documentation, its middleware and its handler. */
export const apiTokensRoute: Route = route(
  {
    method: "get",
    path: "/api/tokens",
    tag: "API tokens",
    summary: "API tokens of the current team (owners see all, members their own)",
    description: "Newest first. `next_cursor` is present while more pages follow.",
    auth: [...USER_AUTH],
    query: [
      ...PAGE_QUERY,
      {
        name: "name",
        type: "string",
        description: "Only tokens whose name contains this text (case-insensitive).",
      },
      {
        name: "state",
        type: "string",
        description: "Only tokens in this state: `active`, `revoked` or `expired`.",
      },
    ],
    responses: {
      200: {
        description: "Tokens, newest first (never the token text)",
        example: { items: [TOKEN_EXAMPLE], next_cursor: null },
      },
      422: {
        description: "A bad `limit`, `cursor` or `state`",
        example: {
          error: {
            code: "validation_failed",
            message: "state: one of active, revoked, expired",
            fields: [{ field: "state", message: "one of active, revoked, expired" }],
          },
        },
      },
    },
  },
  auth,
  apiTokens,
);

/** GET /api/tokens: API tokens of the current team (owners see all, members their own). */
async function apiTokens(c: Context<AppEnv>): Promise<Response> {
  const s = c.get("services");
  const state = oneOf(c, "state", TOKEN_STATES);
  const page = await s.teams.apiTokenPage(userOf(c), {
    ...pageParams(c),
    name: c.req.query("name") || undefined,
    state,
  }, s.options.clock.now());
  return c.json({ items: page.items.map(tokenView), next_cursor: page.next_cursor ?? null });
}
