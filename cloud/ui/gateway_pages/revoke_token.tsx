/** @jsxImportSource hono/jsx */
/** POST `/gateways/:id/tokens/:jti/revoke`: the form that revokes one machine token of a gateway. */
import type { Hono } from "hono";
import type { AppEnv } from "../../api/mod.ts";
import type { GatewayRecord } from "../../store/mod.ts";
import type { Services } from "../../services.ts";
import { form, notFoundPage } from "../guard.tsx";

/** Mounts POST `/gateways/:id/tokens/:jti/revoke`: the form that revokes one machine token of a gateway. */
export function mountRevokeToken(ui: Hono<AppEnv>, s: Services): void {
  ui.post(
    "/gateways/:id/tokens/:jti/revoke",
    form(s, async (c, user) => {
      const gw: GatewayRecord | null = await s.store.repos.gateways.get(
        user.team.id,
        c.req.param("id")!,
      );
      if (!gw) return notFoundPage(c, user, "gateway");
      const revoked = await s.store.tokens.revokeMachineToken(
        user.team.id,
        gw.id,
        c.req.param("jti")!,
        user.actor,
      );
      if (!revoked) return notFoundPage(c, user, "machine token");
      return c.redirect(`/gateways/${gw.id}`, 303);
    }),
  );
}
