/** @jsxImportSource hono/jsx */
/** POST `/gateways/:id/versions/:version/rollback`: the form that pins a gateway to a stored version. */
import type { Hono } from "hono";
import type { AppEnv } from "../../api/mod.ts";
import type { Services } from "../../services.ts";
import { form, notFoundPage } from "../guard.tsx";
import { Flash, Layout } from "../layout.tsx";

/** Mounts POST `/gateways/:id/versions/:version/rollback`: the form that pins a gateway to a stored version. */
export function mountRollback(ui: Hono<AppEnv>, s: Services): void {
  ui.post(
    "/gateways/:id/versions/:version/rollback",
    form(s, async (c, user) => {
      const t = user.team.id;
      const gw = await s.store.repos.gateways.get(t, c.req.param("id")!);
      if (!gw) return notFoundPage(c, user, "gateway");
      const version = Number(c.req.param("version"));
      const ok = Number.isInteger(version) &&
        await s.store.configHistory.pinTo(t, gw.id, gw.code, version, user.actor);
      if (!ok) {
        return c.html(
          <Layout title="Cannot roll back" user={user} active="/gateways">
            <div class="card narrow">
              <Flash kind="error" message={`Version ${version} has no stored snapshot.`} />
              <a href={`/gateways/${gw.id}/versions`}>Back</a>
            </div>
          </Layout>,
          404,
        );
      }
      await s.resources.gatewayConfig(t, gw.id);
      return c.redirect(`/gateways/${gw.id}/versions`, 303);
    }),
  );
}
