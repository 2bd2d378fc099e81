/**
 * The cloud service's state over Deno KV: identities, invitations, tokens, sessions, device
 * requests, signing keys, and the team-scoped resources with their audit log, shares and gateway
 * reports.
 *
 * @example
 * ```ts
 * import { openKv, uuidv7 } from "./mod.ts";
 *
 * // Records are keyed by UUIDv7 (time-ordered) in Deno KV; tests and examples use an in-memory one.
 * const kv = await openKv({ kvUrl: ":memory:", dataDir: "" });
 * const id = uuidv7();
 * await kv.set(["example", id], { name: "pacs" });
 * console.log((await kv.get<{ name: string }>(["example", id])).value?.name); // pacs
 * kv.close();
 * ```
 *
 * @module
 */
import type { Clock } from "../clock.ts";
import { GatewayStateStore } from "./gateway_state.ts";
import { Identity } from "./identity.ts";
import { InvitationStore } from "./invitations.ts";
import { K, RESOURCE_KINDS, type ResourceKind } from "./keys.ts";
import { KIND_SPECS, type RecordOf } from "./records.ts";
import { type KindSpec, Repo } from "./repo.ts";
import { SessionStore } from "./sessions.ts";
import { ShareStore } from "./shares.ts";
import { SigningKeyStore } from "./signing_keys.ts";
import { TokenStore } from "./tokens.ts";
import { DeviceStore } from "./devices.ts";
import { OAuthStore } from "./oauth.ts";
import { ConfigHistoryStore } from "./config_history.ts";
import { StatusSeriesStore } from "./status_series.ts";

export { type Actor, type AuditEntry, listAudit } from "./audit.ts";
export { type DeviceRecord, type DeviceStatus, DeviceStore } from "./devices.ts";
export { StoreError, type StoreErrorCode } from "./errors.ts";
export { SERIES_RETENTION_MS, type StatusSample, StatusSeriesStore } from "./status_series.ts";
export {
  ConfigHistoryStore,
  type ConfigSnapshot,
  type GatewayPin,
  KEPT_VERSIONS,
  type VersionMeta,
} from "./config_history.ts";
export {
  type ApplyReport,
  type ConfigVersion,
  type GatewayState,
  GatewayStateStore,
  MAX_REPORTED_CONFIG_BYTES,
  type ReportedConfigMeta,
  type StatusReport,
} from "./gateway_state.ts";
export {
  Identity,
  type Membership,
  type PublicUser,
  publicUser,
  type Role,
  type Team,
  type User,
} from "./identity.ts";
export {
  INVITATION_STATES,
  type InvitationRecord,
  type InvitationState,
  invitationState,
  InvitationStore,
} from "./invitations.ts";
export { base64Url, constantTimeEqual, randomBase64Url, sha256Hex, uuidv7 } from "./ids.ts";
export { K, RESOURCE_KINDS, type ResourceKind } from "./keys.ts";
export {
  BadCursorError,
  KV_FILE,
  listPage,
  listPageMapped,
  openKv,
  type Page,
  restrictKvFiles,
} from "./kv.ts";
export {
  type OAuthClientRecord,
  type OAuthCodeRecord,
  type OAuthGrantRecord,
  OAuthStore,
  type RefreshRef,
} from "./oauth.ts";
export type * from "./records.ts";
export {
  type BaseRecord,
  type KindSpec,
  MAX_RECORD_BYTES,
  type RecordInput,
  type Ref,
  Repo,
} from "./repo.ts";
export { type Session, SessionStore } from "./sessions.ts";
export { type IncomingShare, type ShareAccess, type ShareRecord, ShareStore } from "./shares.ts";
export { type SealedSecret, type SigningKeyRecord, SigningKeyStore } from "./signing_keys.ts";
export { type ApiTokenRecord, type MachineTokenRecord, TokenStore } from "./tokens.ts";

/** One repository per resource kind. */
export type Repos = { [K in ResourceKind]: Repo<RecordOf[K]> };

/** Everything stored, over one KV connection. */
export class Store {
  readonly kv: Deno.Kv;
  readonly identity: Identity;
  readonly invitations: InvitationStore;
  readonly tokens: TokenStore;
  readonly sessions: SessionStore;
  readonly devices: DeviceStore;
  readonly oauth: OAuthStore;
  readonly signingKeys: SigningKeyStore;
  readonly shares: ShareStore;
  readonly gatewayState: GatewayStateStore;
  readonly configHistory: ConfigHistoryStore;
  readonly statusSeries: StatusSeriesStore;
  readonly repos: Repos;

  constructor(kv: Deno.Kv, clock: Clock) {
    this.kv = kv;
    this.identity = new Identity(kv, clock);
    this.invitations = new InvitationStore(kv, clock, this.identity);
    this.tokens = new TokenStore(kv, clock);
    this.sessions = new SessionStore(kv, clock);
    this.devices = new DeviceStore(kv, clock);
    this.oauth = new OAuthStore(kv, clock);
    this.signingKeys = new SigningKeyStore(kv);
    this.shares = new ShareStore(kv, clock);
    this.gatewayState = new GatewayStateStore(kv, clock);
    this.configHistory = new ConfigHistoryStore(kv, clock);
    this.statusSeries = new StatusSeriesStore(kv);
    this.gatewayState.history = this.configHistory;
    const repos: Record<string, Repo<never>> = {};
    for (const kind of RESOURCE_KINDS) {
      const spec = KIND_SPECS[kind] as KindSpec<never>;
      repos[kind] = new Repo(kv, {
        ...spec,
        cleanup: (_kv, teamId, r) => this.#cleanup(kind, teamId, r),
      }, clock);
    }
    this.repos = repos as unknown as Repos;
  }

  /** The team's revision counter (bumped by every resource change) and its versionstamp. */
  async revision(teamId: string): Promise<Deno.KvEntryMaybe<Deno.KvU64>> {
    return await this.kv.get<Deno.KvU64>(K.revision(teamId));
  }

  /** Keys deleted with a record: its shares, and a gateway's reports and machine tokens. */
  async #cleanup(
    kind: ResourceKind,
    teamId: string,
    record: { id: string },
  ): Promise<Deno.KvKey[]> {
    const keys = await this.shares.keysOfResource(teamId, kind, record.id);
    if (kind === "gateways") {
      keys.push(...await this.gatewayState.keys(teamId, record.id));
      keys.push(...await this.configHistory.keys(teamId, record.id));
      keys.push(...await this.statusSeries.keys(teamId, record.id));
      keys.push(...await this.tokens.machineTokenKeys(teamId, record.id));
    }
    return keys;
  }
}
