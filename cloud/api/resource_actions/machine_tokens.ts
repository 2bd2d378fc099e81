/** The route GET /api/gateways/:id/tokens: Machine tokens issued to a gateway (never the token text). */
import type { Context } from "hono";
import type { AppEnv } from "../env.ts";
import { EXAMPLE_IDS } from "../examples.ts";
import { userOf } from "../middleware.ts";
import { AUTH, auth, GATEWAY_404, ownGateway } from "./common.ts";
import { type Route, route } from "../registry.ts";

/** GET /api/gateways/: its documentation, its middleware and its handler. */
export const machineTokensRoute: Route = route(
  {
    method: "get",
    path: "/api/gateways/:id/tokens",
    tag: "Gateways",
    summary: "Machine tokens issued to a gateway (never the token text)",
    auth: [...AUTH],
    responses: {
      200: {
        description: "Tokens, newest first",
        example: {
          items: [{
            jti: "7c9e6679-7425-40de-944b-e07fc1f90ae7",
            team_id: EXAMPLE_IDS.team,
            gateway_id: EXAMPLE_IDS.gateways,
            issued_at: "2025-01-15T10:00:00.000Z",
            expires_at: "2025-02-14T10:00:00.000Z",
            revoked_at: null,
            renewed_from: null,
            issued_by: "ci-deploy (ada@example.com)",
            last_used_at: "2025-01-16T08:01:00.000Z",
          }],
        },
      },
      404: GATEWAY_404,
    },
  },
  auth,
  machineTokens,
);

/** GET /api/gateways/:id/tokens: Machine tokens issued to a gateway (never the token text). */
async function machineTokens(c: Context<AppEnv>): Promise<Response> {
  const s = c.get("services");
  const p = userOf(c);
  const gw = await ownGateway(s, p.team.id, c.req.param("id")!);
  return c.json({ items: await s.store.tokens.listMachineTokens(p.team.id, gw.id) });
}
