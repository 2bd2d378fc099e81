/** The route POST /api/gateway/authorize: Exchange an API token or user token and a gateway code for a 30-day machine token. */
import type { Context } from "hono";
import { z } from "zod";
import { issueMachineToken } from "../../auth/mod.ts";
import { GATEWAY_CODE_PATTERN } from "../../../shared/mod.ts";
import { readJson } from "../body.ts";
import type { AppEnv } from "../env.ts";
import { requireBearer, userOf } from "../middleware.ts";
import { PAYLOAD_EXAMPLE, UNAUTHORIZED } from "./common.ts";
import { type Route, route } from "../registry.ts";

const authorizeBody = z.strictObject({
  gateway_code: z.string().regex(
    GATEWAY_CODE_PATTERN,
    "1-64 letters, digits, `.`, `_` or `-`, starting with a letter or digit",
  ),
  name: z.string().min(1).max(200).optional(),
});

/** Authorize accepts user tokens and API tokens; every other route a machine token. */
const users = requireBearer("api_token", "user_token");

/** POST /api/gateway/authorize: its documentation, its middleware and its handler. */
export const authorizeRoute: Route = route(
  {
    method: "post",
    path: "/api/gateway/authorize",
    tag: "Gateway authorization",
    summary: "Exchange an API token or user token and a gateway code for a 30-day machine token",
    description:
      "Creates the gateway in the caller's current team when no gateway has this code (201), else issues a new token for the existing one (200). Earlier tokens of the gateway stay valid until they expire or are revoked.",
    auth: ["api_token", "user_token"],
    body: { schema: authorizeBody, example: { gateway_code: "edge-berlin-1" } },
    responses: {
      200: { description: "Machine token for an existing gateway", example: PAYLOAD_EXAMPLE },
      201: { description: "Gateway created; machine token", example: PAYLOAD_EXAMPLE },
      401: UNAUTHORIZED,
      422: {
        description: "Bad gateway code",
        example: {
          error: {
            code: "validation_failed",
            message: "invalid body: gateway_code: 1-64 letters…",
            fields: [{ field: "gateway_code", message: "1-64 letters…" }],
          },
        },
      },
    },
  },
  users,
  authorize,
);

/**
 * POST /api/gateway/authorize:
 * Exchange an API token or user token and a gateway code for a 30-day machine token.
 */
async function authorize(c: Context<AppEnv>): Promise<Response> {
  const s = c.get("services");
  const p = userOf(c);
  const body = await readJson(c, authorizeBody);
  let gateway = await s.store.repos.gateways.findByUnique(p.team.id, body.gateway_code);
  let created = false;
  if (!gateway) {
    try {
      gateway = await s.resources.create("gateways", p.team.id, p.actor, {
        code: body.gateway_code,
        name: body.name ?? body.gateway_code,
        description: "",
      });
      created = true;
    } catch (err) {
      gateway = await s.store.repos.gateways.findByUnique(p.team.id, body.gateway_code);
      if (!gateway) throw err;
    }
  }
  const payload = await issueMachineToken(s, gateway, p.actor);
  c.header("Cache-Control", "no-store");
  return c.json(payload, created ? 201 : 200);
}
