/**
 * Routes beside the plain resource CRUD: a gateway's desired and reported configuration and its
 * machine tokens, a pipeline's TOML for review, JOLT previews, shares, and the audit log.
 *
 * One file per route: its documentation beside its handler.
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import type { AppEnv } from "../env.ts";
 * import { Registry } from "../registry.ts";
 * import { mountResourceActions } from "./mod.ts";
 *
 * // Mounting documents every route in the registry (the OpenAPI document and docs read it).
 * const reg = new Registry(new Hono<AppEnv>());
 * mountResourceActions(reg);
 * console.log(reg.routes.some((r) => r.method === "get" && r.path === "/api/gateways/:id/config")); // true
 * ```
 *
 * @module
 */
import type { Registry } from "../registry.ts";
import { desiredConfigRoute } from "./desired_config.ts";
import { reportedConfigRoute } from "./reported_config.ts";
import { machineTokensRoute } from "./machine_tokens.ts";
import { revokeMachineTokenRoute } from "./revoke_machine_token.ts";
import { pipelineTomlRoute } from "./pipeline_toml.ts";
import { previewTransformRoute } from "./preview_transform.ts";
import { outgoingSharesRoute } from "./outgoing_shares.ts";
import { incomingSharesRoute } from "./incoming_shares.ts";
import { createShareRoute } from "./create_share.ts";
import { revokeShareRoute } from "./revoke_share.ts";
import { auditLogRoute } from "./audit_log.ts";

/** Mounts the extra routes. */
export function mountResourceActions(reg: Registry): void {
  reg.group("/api", (g) =>
    g.mount(
      desiredConfigRoute,
      reportedConfigRoute,
      machineTokensRoute,
      revokeMachineTokenRoute,
      pipelineTomlRoute,
      previewTransformRoute,
      outgoingSharesRoute,
      incomingSharesRoute,
      createShareRoute,
      revokeShareRoute,
      auditLogRoute,
    ));
}
