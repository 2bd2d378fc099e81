/** The cloud integration as the management API sees it (`/{prefix}/token`, `authorize`, …). */
import type { SyncStatus } from "./sync_status.ts";
import type { TokenSource } from "./token_store.ts";

/** Answer of `POST /{prefix}/token` and `POST /{prefix}/authorize`. */
export interface TokenStored {
  stored: true;
  gateway_id: string;
  gateway_code: string;
  expires_at: string;
  /** True when the token is in the encrypted state file (it survives a restart). */
  persisted: boolean;
}

/** Answer of `POST /{prefix}/update`. */
export interface ConfigUploaded {
  /** Bytes of configuration text uploaded. */
  uploaded_bytes: number;
  /** The local files uploaded (main file first). */
  files: string[];
  /** SHA-256 of the upload, as the cloud computed it. */
  sha256: string;
  uploaded_at: string;
  /** What the cloud's validator found in the upload (it is stored anyway). */
  problems: { path: string; line?: number; message: string }[];
}

/** The `cloud` object of `GET /{prefix}/info`. */
export interface CloudInfo {
  enabled: boolean;
  url: string | null;
  /** The held token's gateway code, else the configured (or host-name) code. */
  gateway_code: string;
  gateway_id: string | null;
  /** True while a machine token is held. */
  authorized: boolean;
  /** True once the held token was checked with the cloud (signature, issuer, revocation). */
  verified: boolean;
  token_source: TokenSource | null;
  token_expires_at: string | null;
  /** When the held token will be renewed (a third of its life before expiry, or renew_before_days). */
  token_renews_at: string | null;
  /** True when the held token is in the encrypted state file (it survives a restart). */
  persisted: boolean;
  /** True when `GATEWAY_ENCRYPTION_KEY` is set (tokens are persisted). */
  encryption_key: boolean;
  state_dir: string | null;
  sync: SyncStatus;
}

/** The cloud operations of the management API. Failures throw GatewayError (status, code). */
/** Answer of `POST /{prefix}/cloud-pin/reset`. */
export interface PinReset {
  reset: boolean;
  /** The pin that was removed, or null when there was none. */
  previous: { issuer: string; team_id: string; gateway_id: string; pinned_at: string } | null;
}

export interface CloudControl {
  /** Validates, verifies with the cloud and stores a machine-token payload. */
  storeToken(body: unknown): Promise<TokenStored>;
  /** Exchanges a user token (the Authorization header) for a machine token and stores it. */
  authorize(authorization: string | undefined, body: unknown): Promise<TokenStored>;
  /** Uploads the local configuration files to the cloud. */
  uploadConfig(): Promise<ConfigUploaded>;
  /** Removes the cloud pin (an operator's explicit, logged action); answers what it was. */
  resetPin(): Promise<PinReset>;
  /** The state for `GET /{prefix}/info`. */
  info(): CloudInfo;
}
