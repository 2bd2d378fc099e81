/** @jsxImportSource hono/jsx */
/** GET `/gateways/:id/reported-config`: the configuration a gateway uploaded, as a TOML download. */
import type { Hono } from "hono";
import type { AppEnv } from "../../api/mod.ts";
import type { Services } from "../../services.ts";
import { notFoundPage, page } from "../guard.tsx";

/** Mounts GET `/gateways/:id/reported-config`: the configuration a gateway uploaded, as a TOML download. */
export function mountReportedConfig(ui: Hono<AppEnv>, s: Services): void {
  ui.get(
    "/gateways/:id/reported-config",
    page(s, async (c, user) => {
      const gw = await s.store.repos.gateways.get(user.team.id, c.req.param("id")!);
      if (!gw) return notFoundPage(c, user, "gateway");
      const text = await s.store.gatewayState.reportedConfig(user.team.id, gw.id);
      if (text === null) return notFoundPage(c, user, "uploaded configuration");
      return c.body(text, 200, {
        "Content-Type": "application/toml; charset=utf-8",
        "Content-Disposition": `attachment; filename="${gw.code}.toml"`,
      });
    }),
  );
}
