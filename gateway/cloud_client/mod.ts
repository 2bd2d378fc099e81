/**
 * The gateway's cloud integration: machine-token store (age-encrypted state file), token checks
 * against the cloud's JWKS, configuration sync (long poll, apply, report), status reports, token
 * renewal and transform downloads by id.
 *
 * @example
 * ```ts
 * import { EncryptionKeyError, parseEncryptionKey } from "./mod.ts";
 * import { generateIdentity } from "age-encryption";
 *
 * // GATEWAY_ENCRYPTION_KEY: an age X25519 identity, as it is or base64-encoded.
 * const key = await parseEncryptionKey(await generateIdentity());
 * console.log(key.recipient.startsWith("age1")); // true: the public half encrypts the state file
 * await parseEncryptionKey("not a key").catch((e) => console.log(e instanceof EncryptionKeyError)); // true
 * ```
 *
 * @module
 */
export {
  CloudIntegration,
  type CloudIntegrationOptions,
  MACHINE_TOKEN_ENV,
} from "./integration.ts";
export type { CloudControl, CloudInfo, ConfigUploaded, TokenStored } from "./types.ts";
export {
  initialSyncStatus,
  type LastApply,
  type SyncState,
  type SyncStatus,
} from "./sync_status.ts";
export type { TokenSource } from "./token_store.ts";
export { type Clock, systemClock } from "./clock.ts";
export {
  ENCRYPTION_KEY_ENV,
  type EncryptionKey,
  EncryptionKeyError,
  parseEncryptionKey,
} from "./encryption_key.ts";
export { JWT_SECRET_ENV } from "./jwt.ts";
export {
  loadWithManagedConfig,
  MANAGED_CONFIG_NAME,
  managedConfigPath,
  SYNC_STATE_NAME,
} from "./managed_config.ts";
export { TOKEN_FILE_NAME } from "./token_file.ts";
export { TRANSFORM_ID_FILE, transformIdOf } from "./transforms.ts";
