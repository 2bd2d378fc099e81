/**
 * Gateways: status, last seen and configuration versions; one gateway's reports, config and tokens.
 *
 * One file per page or form: its route beside its handler.
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import type { AppEnv } from "../../api/mod.ts";
 * import type { Services } from "../../services.ts";
 * import { mountGatewayPages } from "./mod.ts";
 *
 * // The pages are routes of the UI app; the services are used per request, not when mounting.
 * const ui = new Hono<AppEnv>();
 * mountGatewayPages(ui, {} as Services);
 * console.log(ui.routes.some((r) => r.method === "GET" && r.path === "/gateways/:id")); // true
 * ```
 *
 * @module
 */
import type { Hono } from "hono";
import type { AppEnv } from "../../api/mod.ts";
import type { Services } from "../../services.ts";
import { mountGatewayList } from "./list.tsx";
import { mountGatewayDetail } from "./detail.tsx";
import { mountRevokeToken } from "./revoke_token.tsx";

/** Mounts `/gateways` and `/gateways/:id`. */
export function mountGatewayPages(ui: Hono<AppEnv>, s: Services): void {
  mountGatewayList(ui, s);
  mountGatewayDetail(ui, s);
  mountRevokeToken(ui, s);
}
