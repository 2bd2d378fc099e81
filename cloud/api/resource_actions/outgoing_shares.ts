/** The route GET /api/shares: Shares your team granted. */
import type { Context } from "hono";
import type { AppEnv } from "../env.ts";
import { userOf } from "../middleware.ts";
import { AUTH, auth, SHARE_EXAMPLE, teamNames } from "./common.ts";
import { type Route, route } from "../registry.ts";

/** GET /api/shares: its documentation, its middleware and its handler. */
export const outgoingSharesRoute: Route = route(
  {
    method: "get",
    path: "/api/shares",
    tag: "Shares",
    summary: "Shares your team granted",
    description: "Each share names the receiving team (`target_team_name`).",
    auth: [...AUTH],
    responses: {
      200: {
        description: "Shares",
        example: { items: [{ ...SHARE_EXAMPLE, target_team_name: "Cardiology" }] },
      },
    },
  },
  auth,
  outgoingShares,
);

/** GET /api/shares: Shares your team granted. */
async function outgoingShares(c: Context<AppEnv>): Promise<Response> {
  const s = c.get("services");
  const name = teamNames(s);
  const items = await s.shares.outgoing(userOf(c).team.id);
  return c.json({
    items: await Promise.all(
      items.map(async (x) => ({ ...x, target_team_name: await name(x.target_team_id) })),
    ),
  });
}
