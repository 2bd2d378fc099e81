/** Authentication: passwords, signing keys, JWTs, bearer tokens, device login, token issuing. */
export { dummyHash, hashPassword, needsRehash, verifyPassword } from "./password.ts";
export { KeyRing, type PublicJwk } from "./keys.ts";
export { type MachineTokenJwtClaims, TokenError, Tokens, type UserTokenClaims } from "./jwt.ts";
export {
  API_TOKEN_PREFIX,
  authenticate,
  type BearerKind,
  bearerKind,
  bearerToken,
  type MachinePrincipal,
  type Principal,
  type UserPrincipal,
} from "./principal.ts";
export { createApiToken, issueMachineToken, RENEWAL_GRACE_MS } from "./issue.ts";
export {
  decideDevice,
  DEVICE_CLIENTS,
  DEVICE_GRANT_TYPE,
  type DeviceAuthorization,
  type DeviceTokenError,
  type DeviceTokenResult,
  formatUserCode,
  normalizeUserCode,
  pendingByUserCode,
  pollDeviceToken,
  startDeviceAuthorization,
} from "./device.ts";
