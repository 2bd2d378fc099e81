/** The route GET /api/shares/incoming: Shares other teams granted to your team. */
import type { Context } from "hono";
import type { AppEnv } from "../env.ts";
import { userOf } from "../middleware.ts";
import { AUTH, auth, SHARE_EXAMPLE, teamNames } from "./common.ts";
import { type Route, route } from "../registry.ts";

/** GET /api/shares/incoming: its documentation, its middleware and its handler. */
export const incomingSharesRoute: Route = route(
  {
    method: "get",
    path: "/api/shares/incoming",
    tag: "Shares",
    summary: "Shares other teams granted to your team",
    description:
      "Each share names the owning team (`team_name`). Read a shared record with `GET /api/<kind>/<resource_id>` (or list them with `GET /api/<kind>?shared=only`); change it with PATCH when `access` is `write`.",
    auth: [...AUTH],
    responses: {
      200: {
        description: "Shares",
        example: { items: [{ ...SHARE_EXAMPLE, team_name: "Radiology" }] },
      },
    },
  },
  auth,
  incomingShares,
);

/** GET /api/shares/incoming: Shares other teams granted to your team. */
async function incomingShares(c: Context<AppEnv>): Promise<Response> {
  const s = c.get("services");
  const name = teamNames(s);
  const items = await s.shares.incoming(userOf(c).team.id);
  return c.json({
    items: await Promise.all(items.map(async (x) => ({ ...x, team_name: await name(x.team_id) }))),
  });
}
