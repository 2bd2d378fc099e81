/**
 * Authentication: passwords, signing keys, JWTs, bearer tokens, device login, token issuing, and
 * the MCP authorization flow (authorization code + PKCE, dynamic client registration).
 *
 * @example
 * ```ts
 * import { hashPassword, verifyPassword } from "./mod.ts";
 *
 * // PBKDF2-SHA256 with the iteration count stored in the hash (a low count here, for speed).
 * const stored = await hashPassword("correct horse battery", 1_000);
 * console.log(await verifyPassword("correct horse battery", stored)); // true
 * console.log(await verifyPassword("wrong", stored)); // false
 * ```
 *
 * @module
 */
export { dummyHash, hashPassword, needsRehash, verifyPassword } from "./password.ts";
export { KeyRing, type PublicJwk, PUBLISH_LEAD_MS } from "./keys.ts";
export {
  DEV_KEY_FILE,
  KEY_ENCRYPTION_ENV,
  KEY_ENCRYPTION_FILE_ENV,
  keyEncryptionKey,
  MISSING_KEY_MESSAGE,
  openSecret,
  resolveKeyEncryptionKey,
  type SealedSecret,
  sealSecret,
} from "./key_encryption.ts";
export {
  type MachineTokenJwtClaims,
  type McpAccessClaims,
  TokenError,
  Tokens,
  type UserTokenClaims,
} from "./jwt.ts";
export {
  approveAuthorization,
  type AuthorizationCheck,
  type AuthorizationRequest,
  checkAuthorizationRequest,
  CODE_TTL_MS,
  errorRedirect,
  exchangeCode,
  GRANT_MAX_MS,
  MCP_ACCESS_TTL_SECONDS,
  MCP_RESOURCE_PATH,
  MCP_SCOPE,
  mcpResource,
  mcpResourceFor,
  type OAuthFailure,
  redirectUriMatches,
  redirectUriProblem,
  REFRESH_IDLE_MS,
  REFRESH_TOKEN_PREFIX,
  refreshGrant,
  registerClient,
  type RegisteredClient,
  revokeToken,
  type TokenAnswer,
} from "./mcp_oauth.ts";
export type { BaseUrl, OAuthServer } from "./mcp_oauth.ts";
export {
  API_TOKEN_PREFIX,
  authenticate,
  type Authenticator,
  type BearerKind,
  bearerKind,
  bearerToken,
  type MachinePrincipal,
  type Principal,
  type UserPrincipal,
} from "./principal.ts";
export {
  type ApiTokenIssuer,
  createApiToken,
  issueMachineToken,
  type MachineTokenIssuer,
  RENEWAL_GRACE_MS,
} from "./issue.ts";
export {
  advertisedOrigin,
  canonicalLoopbackUrl,
  isLoopbackHostname,
  isOwnAuthority,
} from "./loopback.ts";
export {
  decideDevice,
  DEVICE_CLIENTS,
  DEVICE_GRANT_TYPE,
  type DeviceAuthorization,
  type DeviceCodes,
  type DeviceFlow,
  type DeviceTokenError,
  type DeviceTokenResult,
  formatUserCode,
  normalizeUserCode,
  pendingByUserCode,
  pollDeviceToken,
  startDeviceAuthorization,
} from "./device.ts";
