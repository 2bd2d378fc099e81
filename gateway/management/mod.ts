/**
 * The management API of the gateway: the Hono app, its control contract and its bodies.
 *
 * @example
 * ```ts
 * import { hostAllowed, normalizePrefix, sameToken } from "./mod.ts";
 *
 * // DNS rebinding: a foreign Host is refused unless it is listed in allowed_hosts.
 * console.log(hostAllowed("127.0.0.1:9091", []), hostAllowed("evil.example", [])); // true false
 * console.log(sameToken("s3cret", "s3cret")); // true, in constant time
 * console.log(normalizePrefix("/admin/")); // admin
 * ```
 *
 * @module
 */
export {
  createManagementApp,
  type ManagementApp,
  MAX_BODY_BYTES,
  METRICS_CONTENT_TYPE,
} from "./app.ts";
export { CLOUD_DISABLED_MESSAGE, type CloudOperation } from "./cloud.ts";
export type {
  DimseListenerInfo,
  GatewayControl,
  MllpListenerInfo,
  PipelineInfo,
  ReloadOutcome,
  RouteInfo,
  UnresponsiveIsolate,
  WorkerStatus,
} from "./control.ts";
export { dimseRoutes } from "./dimse_routes.ts";
export { mllpRoutes } from "./mllp_routes.ts";
export { type GuardSettings, hostAllowed, type RoleToken, sameToken } from "./guard.ts";
export {
  callerOf,
  type ManagementCaller,
  type ManagementRole,
  requireRole,
  roleAllows,
} from "./roles.ts";
export type { ManagementEnv } from "./request_context.ts";
export {
  GENERATED_TOKEN_FILE,
  MANAGEMENT_TOKEN_ENV,
  type ManagementToken,
  MIN_TOKEN_LENGTH,
  type ResolvedRoleToken,
  resolveManagementToken,
  resolveRoleTokens,
} from "./token.ts";
export { type InstanceInfo, instanceInfo, type ListenerInfo } from "./info.ts";
export { normalizePrefix } from "./routing.ts";
