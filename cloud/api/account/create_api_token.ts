/** The route POST /api/tokens: Create an API token in the current team (user tokens only); the token text is shown once. */
import { z } from "zod";
import { createApiToken as issueApiToken } from "../../auth/mod.ts";
import type { Context } from "hono";
import type { AppEnv } from "../env.ts";
import { readJson } from "../body.ts";
import { userTokenOf } from "../middleware.ts";
import { auth, TOKEN_EXAMPLE, tokenView } from "./common.ts";
import { type Route, route } from "../registry.ts";

const tokenBody = z.strictObject({
  name: z.string().trim().min(1).max(100),
  expires_in_days: z.int().min(1).max(3650).nullable().default(null),
});

/** POST /api/tokens: its documentation, its middleware and its handler. */
export const createApiTokenRoute: Route = route(
  {
    method: "post",
    path: "/api/tokens",
    tag: "API tokens",
    summary:
      "Create an API token in the current team (user tokens only); the token text is shown once",
    auth: ["user_token"],
    body: { schema: tokenBody, example: { name: "ci-deploy", expires_in_days: 90 } },
    responses: {
      201: {
        description: "Created; `token` appears in this answer only",
        example: { ...TOKEN_EXAMPLE, token: "gwc_Xy12abQ3…" },
      },
      403: {
        description: "Called with an API token",
        example: {
          error: { code: "forbidden", message: "API tokens cannot create API tokens" },
        },
      },
    },
  },
  auth,
  createApiToken,
);

/**
 * POST /api/tokens:
 * Create an API token in the current team (user tokens only); the token text is shown once.
 */
async function createApiToken(c: Context<AppEnv>): Promise<Response> {
  const s = c.get("services");
  const p = userTokenOf(
    c,
    "API tokens cannot create API tokens; use a user token or the web UI",
  );
  const body = await readJson(c, tokenBody);
  const { token, record } = await issueApiToken(s, {
    userId: p.user.id,
    teamId: p.team.id,
    name: body.name,
    expiresInDays: body.expires_in_days,
  }, p.actor);
  c.header("Cache-Control", "no-store");
  return c.json({ ...tokenView(record), token }, 201);
}
