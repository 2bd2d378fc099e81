/** The route DELETE /api/tokens/:id: Revoke an API token (your own, or any of the team as an owner). */
import type { Context } from "hono";
import type { AppEnv } from "../env.ts";
import { userOf } from "../middleware.ts";
import { auth, TOKEN_EXAMPLE, tokenView, USER_AUTH } from "./common.ts";
import { type Route, route } from "../registry.ts";

/** DELETE /api/tokens/: its documentation, its middleware and its handler. */
export const revokeApiTokenRoute: Route = route(
  {
    method: "delete",
    path: "/api/tokens/:id",
    tag: "API tokens",
    summary: "Revoke an API token (your own, or any of the team as an owner)",
    auth: [...USER_AUTH],
    responses: {
      200: {
        description: "Revoked",
        example: { ...TOKEN_EXAMPLE, revoked_at: "2025-01-17T12:00:00.000Z" },
      },
      404: {
        description: "No such token in this team",
        example: { error: { code: "not_found", message: "API token not found" } },
      },
    },
  },
  auth,
  revokeApiToken,
);

/** DELETE /api/tokens/:id: Revoke an API token (your own, or any of the team as an owner). */
async function revokeApiToken(c: Context<AppEnv>): Promise<Response> {
  const revoked = await c.get("services").teams.revokeApiToken(userOf(c), c.req.param("id")!);
  return c.json(tokenView(revoked));
}
