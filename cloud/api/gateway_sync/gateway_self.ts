/** The route GET /api/gateway/self: The gateway and token the machine token stands for (check a token before storing it). */
import type { Context } from "hono";
import type { AppEnv } from "../env.ts";
import { machineOf } from "../middleware.ts";
import { GATEWAY_ID, machine, PAYLOAD_EXAMPLE, UNAUTHORIZED } from "./common.ts";
import { type Route, route } from "../registry.ts";

/** GET /api/gateway/self: its documentation, its middleware and its handler. */
export const gatewaySelfRoute: Route = route(
  {
    method: "get",
    path: "/api/gateway/self",
    tag: "Gateway sync",
    summary: "The gateway and token the machine token stands for (check a token before storing it)",
    auth: ["machine"],
    responses: {
      200: {
        description: "The gateway",
        example: {
          gateway_id: GATEWAY_ID,
          gateway_code: "edge-berlin-1",
          name: "edge-berlin-1",
          team_id: "0190f5d2-6a3c-7c1e-9a51-2b7d4c9e8f11",
          token: {
            issued_at: "2025-01-15T10:00:00.000Z",
            expires_at: PAYLOAD_EXAMPLE.expires_at,
            abilities: PAYLOAD_EXAMPLE.abilities,
          },
        },
      },
      401: UNAUTHORIZED,
    },
  },
  machine,
  gatewaySelf,
);

/**
 * GET /api/gateway/self:
 * The gateway and token the machine token stands for (check a token before storing it).
 */
async function gatewaySelf(c: Context<AppEnv>): Promise<Response> {
  const s = c.get("services");
  const m = machineOf(c);
  const gw = (await s.store.repos.gateways.get(m.teamId, m.gatewayId))!;
  await s.store.gatewayState.seen(m.teamId, m.gatewayId);
  return c.json({
    gateway_id: gw.id,
    gateway_code: gw.code,
    name: gw.name,
    team_id: gw.team_id,
    token: {
      issued_at: m.token.issued_at,
      expires_at: m.token.expires_at,
      abilities: m.abilities,
    },
  });
}
