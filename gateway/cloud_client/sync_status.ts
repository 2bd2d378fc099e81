/** What the sync has done so far, as `GET /{prefix}/info` reports it under `cloud.sync`. */

/** Where the sync is. */
export type SyncState =
  /** Cloud disabled, no token, or stopped. */
  | "stopped"
  /** Checking the held token with the cloud (retrying while the cloud cannot be reached). */
  | "verifying"
  /** Pulling configuration, reporting status, renewing. */
  | "running"
  /** The cloud refused the token: no more calls until a new token arrives. */
  | "unauthorized";

/** The outcome of the last applied (or refused) pulled configuration. */
export interface LastApply {
  version: number;
  status: "applied" | "failed";
  errors: { path?: string; message: string }[];
  at: string;
}

/** The sync's status. */
export interface SyncStatus {
  state: SyncState;
  /** Version of the pulled configuration that runs (from `cloud-sync.json` at start). */
  config_version: number | null;
  etag: string | null;
  /** Last answer of the configuration pull (200 or 304). */
  last_pull_at: string | null;
  last_apply: LastApply | null;
  last_status_report_at: string | null;
  last_renewal_at: string | null;
  /** The latest failure, cleared by the next success of the same kind. */
  last_error: { at: string; message: string } | null;
}

/** A fresh status. */
export function initialSyncStatus(): SyncStatus {
  return {
    state: "stopped",
    config_version: null,
    etag: null,
    last_pull_at: null,
    last_apply: null,
    last_status_report_at: null,
    last_renewal_at: null,
    last_error: null,
  };
}
