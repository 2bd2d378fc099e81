/**
 * The gateway's cloud integration: machine-token store (age-encrypted state file), token checks
 * against the cloud's JWKS, configuration sync (long poll, apply, report), status reports, token
 * renewal and transform downloads by id.
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
