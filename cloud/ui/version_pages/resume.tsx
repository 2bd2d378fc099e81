/** @jsxImportSource hono/jsx */
/** POST `/gateways/:id/versions/resume`: the form that lets a pinned gateway follow the records again. */
import type { Hono } from "hono";
import type { AppEnv } from "../../api/mod.ts";
import type { Services } from "../../services.ts";
import { form, notFoundPage } from "../guard.tsx";

/** Mounts POST `/gateways/:id/versions/resume`: the form that lets a pinned gateway follow the records again. */
export function mountResume(ui: Hono<AppEnv>, s: Services): void {
  ui.post(
    "/gateways/:id/versions/resume",
    form(s, async (c, user) => {
      const t = user.team.id;
      const gw = await s.store.repos.gateways.get(t, c.req.param("id")!);
      if (!gw) return notFoundPage(c, user, "gateway");
      await s.store.configHistory.unpin(t, gw.id, gw.code, user.actor);
      await s.resources.gatewayConfig(t, gw.id);
      return c.redirect(`/gateways/${gw.id}/versions`, 303);
    }),
  );
}
