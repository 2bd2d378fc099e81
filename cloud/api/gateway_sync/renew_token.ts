/** The route POST /api/gateway/token/renew: Renew the machine token before it expires (a new 30-day token). */
import type { Context } from "hono";
import { issueMachineToken } from "../../auth/mod.ts";
import type { AppEnv } from "../env.ts";
import { machineOf } from "../middleware.ts";
import { ability, machine, PAYLOAD_EXAMPLE, UNAUTHORIZED } from "./common.ts";
import { type Route, route } from "../registry.ts";

/** POST /api/gateway/token/renew: its documentation, its middleware and its handler. */
export const renewTokenRoute: Route = route(
  {
    method: "post",
    path: "/api/gateway/token/renew",
    tag: "Gateway sync",
    summary: "Renew the machine token before it expires (a new 30-day token)",
    description:
      "The token used for the call stays valid for one more hour at most (in case the answer is lost), then ends.",
    auth: ["machine"],
    responses: {
      200: { description: "The new token", example: PAYLOAD_EXAMPLE },
      401: UNAUTHORIZED,
    },
  },
  machine,
  ability("token:renew"),
  renewToken,
);

/**
 * POST /api/gateway/token/renew:
 * Renew the machine token before it expires (a new 30-day token).
 */
async function renewToken(c: Context<AppEnv>): Promise<Response> {
  const s = c.get("services");
  const m = machineOf(c);
  const gw = (await s.store.repos.gateways.get(m.teamId, m.gatewayId))!;
  const payload = await issueMachineToken(s, gw, m.actor, m.token.jti);
  c.header("Cache-Control", "no-store");
  return c.json(payload);
}
