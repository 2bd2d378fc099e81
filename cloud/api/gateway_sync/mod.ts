/**
 * The gateway side: `POST /api/gateway/authorize` (SPEC) exchanges an API or user token and a
 * gateway code for a 30-day machine token; every other `/api/gateway/*` route is called by the
 * gateway with that machine token: pull the desired configuration (ETag, long poll), report apply
 * outcomes and status, upload the local configuration, download transforms, renew the token.
 *
 * One file per route: its documentation beside its handler.
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import type { AppEnv } from "../env.ts";
 * import { Registry } from "../registry.ts";
 * import { mountGateway } from "./mod.ts";
 *
 * // Mounting documents every route in the registry (the OpenAPI document and docs read it).
 * const reg = new Registry(new Hono<AppEnv>());
 * mountGateway(reg);
 * console.log(reg.routes.some((r) => r.method === "post" && r.path === "/api/gateway/authorize")); // true
 * ```
 *
 * @module
 */
import type { Registry } from "../registry.ts";
import { authorizeRoute } from "./authorize.ts";
import { gatewaySelfRoute } from "./gateway_self.ts";
import { pullConfigRoute } from "./pull_config.ts";
import { reportApplyRoute } from "./report_apply.ts";
import { reportStatusRoute } from "./report_status.ts";
import { uploadLocalConfigRoute } from "./upload_local_config.ts";
import { downloadTransformRoute } from "./download_transform.ts";
import { renewTokenRoute } from "./renew_token.ts";
export { configEtag } from "./common.ts";

/** Mounts the authorize route and the machine-token routes. */
export function mountGateway(reg: Registry): void {
  reg.group("/api/gateway", (g) =>
    g.mount(
      authorizeRoute,
      gatewaySelfRoute,
      pullConfigRoute,
      reportApplyRoute,
      reportStatusRoute,
      uploadLocalConfigRoute,
      downloadTransformRoute,
      renewTokenRoute,
    ));
}
