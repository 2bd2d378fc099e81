/** The route DELETE /api/gateways/:id/tokens/:jti: Revoke a machine token of a gateway. */
import type { Context } from "hono";
import type { AppEnv } from "../env.ts";
import { notFound } from "../errors.ts";
import { userOf } from "../middleware.ts";
import { AUTH, auth, ownGateway } from "./common.ts";
import { type Route, route } from "../registry.ts";

/** DELETE /api/gateways/: its documentation, its middleware and its handler. */
export const revokeMachineTokenRoute: Route = route(
  {
    method: "delete",
    path: "/api/gateways/:id/tokens/:jti",
    tag: "Gateways",
    summary: "Revoke a machine token of a gateway",
    auth: [...AUTH],
    responses: {
      200: {
        description: "Revoked",
        example: {
          jti: "7c9e6679-7425-40de-944b-e07fc1f90ae7",
          revoked_at: "2025-01-17T12:00:00.000Z",
        },
      },
      404: {
        description: "No such gateway or token in your team",
        example: { error: { code: "not_found", message: "machine token not found" } },
      },
    },
  },
  auth,
  revokeMachineToken,
);

/** DELETE /api/gateways/:id/tokens/:jti: Revoke a machine token of a gateway. */
async function revokeMachineToken(c: Context<AppEnv>): Promise<Response> {
  const s = c.get("services");
  const p = userOf(c);
  const gw = await ownGateway(s, p.team.id, c.req.param("id")!);
  const revoked = await s.store.tokens.revokeMachineToken(
    p.team.id,
    gw.id,
    c.req.param("jti")!,
    p.actor,
  );
  if (!revoked) throw notFound("machine token");
  return c.json(revoked);
}
