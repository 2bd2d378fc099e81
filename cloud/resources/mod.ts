/**
 * Resources of a team: request schemas, checks against the gateway's schema, the generated gateway
 * configuration, and the services the REST API, the MCP server and the UI are thin faces over
 * (ResourceService, ShareService, TeamService, InvitationService, the kind catalogue, the lists of
 * a team's records with those shared with it).
 *
 * @example
 * ```ts
 * import { backendCreate } from "./mod.ts";
 *
 * // What POST /api/backends accepts (the MCP tools use the same schemas).
 * const ok = backendCreate.safeParse({ name: "pacs", service_id: crypto.randomUUID(), type: "dicom_scu" });
 * const bad = backendCreate.safeParse({ name: "pacs", service_id: crypto.randomUUID(), type: "ftp" });
 * console.log(ok.success, bad.success); // true false
 * ```
 *
 * @module
 */
export * from "./schemas.ts";
export { checkTransformSpec, type FieldProblem, urlCredentialMessage } from "./checks.ts";
export {
  type ConfigSources,
  type GeneratedConfig,
  generateGatewayConfig,
  generatePipelineConfig,
  type NeededTransform,
  targetName,
  transformFile,
  TRANSFORMS_PATH,
  transformText,
} from "./toml.ts";
export {
  type Access,
  gatewayStatus,
  type GatewayView,
  type ListQuery,
  OFFLINE_AFTER_MS,
  ResourceService,
  type VersionedConfig,
  type Visible,
} from "./service.ts";
export { type KindInfo, KINDS, SINGULAR } from "./kinds.ts";
export { ShareService } from "./shares.ts";
export {
  type TeamCaller,
  TeamService,
  type TokenQuery,
  type TokenState,
  tokenState,
} from "./teams.ts";
export {
  type FoundInvitation,
  INVITATION_CODE_PREFIX,
  INVITATION_DAYS,
  InvitationService,
  type InvitationView,
  type IssuedInvitation,
  MAX_INVITATION_DAYS,
} from "./invitations.ts";
export {
  findVisible,
  type ListedRecord,
  SHARED_SCOPES,
  type SharedScope,
  type VisibleQuery,
} from "./listing.ts";
