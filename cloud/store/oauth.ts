/**
 * The MCP authorization flow's state: registered clients (RFC 7591, global: registration needs no
 * account), authorization codes (single use, kept by the SHA-256 of the code), and grants (one per
 * approval, under the approving user's team, so the tokens page can list and revoke them). A
 * grant holds the SHA-256 of its current refresh token; an index maps refresh-token hashes to the
 * grant, and a rotated-out hash stays in the index marked `current: false` so that its reuse can
 * be recognized and the grant revoked (OAuth 2.1 §4.3.1 refresh token rotation).
 */
import { type Clock, iso } from "../clock.ts";
import { type Actor, addAudit } from "./audit.ts";
import { K } from "./keys.ts";

/** A client registered by RFC 7591 dynamic registration (public: no secret). */
export interface OAuthClientRecord {
  client_id: string;
  /** Self-declared; shown on the consent page as such. */
  client_name: string | null;
  client_uri: string | null;
  redirect_uris: string[];
  created_at: string;
  /** Last authorization or refresh (written at most daily). */
  last_used_at: string | null;
}

/** An issued authorization code (the code itself is never stored). */
export interface OAuthCodeRecord {
  client_id: string;
  redirect_uri: string;
  /** The PKCE S256 challenge. */
  code_challenge: string;
  resource: string;
  scope: string;
  user_id: string;
  team_id: string;
  created_at: string;
  expires_at: string;
  /** Set when redeemed: a second redemption revokes this grant. */
  grant_id?: string;
}

/** One approval of a client by a user in a team. */
export interface OAuthGrantRecord {
  id: string;
  team_id: string;
  user_id: string;
  client_id: string;
  client_name: string | null;
  resource: string;
  scope: string;
  created_at: string;
  /** Last token refresh (or the approval). */
  refreshed_at: string;
  /** When the refresh token stops working unless refreshed before. */
  expires_at: string;
  /** SHA-256 (hex) of the current refresh token. */
  refresh_hash: string;
}

/** What a refresh-token hash points to. */
export interface RefreshRef {
  team_id: string;
  grant_id: string;
  /** False for a rotated-out token: presenting it again revokes the grant. */
  current: boolean;
}

/** A rotated-out refresh token is remembered this long (for reuse detection). */
const RETIRED_REFRESH_MS = 90 * 24 * 60 * 60 * 1000;
/** How often `last_used_at` of a client is written at most. */
const CLIENT_TOUCH_MS = 24 * 60 * 60 * 1000;

/** Clients, codes and grants over KV. */
export class OAuthStore {
  #kv: Deno.Kv;
  #clock: Clock;

  constructor(kv: Deno.Kv, clock: Clock) {
    this.#kv = kv;
    this.#clock = clock;
  }

  /** Stores a newly registered client that KV drops after `ttlMs` unless it is used. */
  async addClient(record: OAuthClientRecord, ttlMs: number): Promise<void> {
    await this.#kv.set(K.oauthClient(record.client_id), record, { expireIn: ttlMs });
  }

  /** The client `clientId`, or null. */
  async client(clientId: string): Promise<OAuthClientRecord | null> {
    return (await this.#kv.get<OAuthClientRecord>(K.oauthClient(clientId))).value;
  }

  /** Marks a client used and extends its life to `ttlMs` from now (at most one write a day). */
  async touchClient(record: OAuthClientRecord, ttlMs: number): Promise<void> {
    const now = this.#clock.now();
    const last = record.last_used_at ? Date.parse(record.last_used_at) : 0;
    if (now - last < CLIENT_TOUCH_MS) return;
    await this.#kv.set(K.oauthClient(record.client_id), { ...record, last_used_at: iso(now) }, {
      expireIn: ttlMs,
    });
  }

  /** Stores an authorization code by its hash until it expires. */
  async addCode(hash: string, record: OAuthCodeRecord): Promise<void> {
    const expireIn = Math.max(1000, Date.parse(record.expires_at) - this.#clock.now());
    await this.#kv.set(K.oauthCode(hash), record, { expireIn });
  }

  /** The code record of `hash` with its versionstamp. */
  async code(hash: string): Promise<Deno.KvEntryMaybe<OAuthCodeRecord>> {
    return await this.#kv.get<OAuthCodeRecord>(K.oauthCode(hash));
  }

  /**
   * Redeems a code: in one atomic step marks it used (by `grant`) and stores the grant and its
   * refresh-token index. False when the code changed since `entry` was read (redeemed meanwhile).
   */
  async redeemCode(
    hash: string,
    entry: Deno.KvEntry<OAuthCodeRecord>,
    grant: OAuthGrantRecord,
    actor: Actor,
  ): Promise<boolean> {
    const now = this.#clock.now();
    const codeLeft = Math.max(1000, Date.parse(entry.value.expires_at) - now);
    const grantLeft = Math.max(1000, Date.parse(grant.expires_at) - now);
    const ref: RefreshRef = { team_id: grant.team_id, grant_id: grant.id, current: true };
    const op = this.#kv.atomic()
      .check(entry)
      .set(K.oauthCode(hash), { ...entry.value, grant_id: grant.id }, { expireIn: codeLeft })
      .set(K.oauthGrant(grant.team_id, grant.id), grant, { expireIn: grantLeft })
      .set(K.oauthRefresh(grant.refresh_hash), ref, { expireIn: grantLeft });
    addAudit(op, grant.team_id, now, {
      actor,
      action: "mcp_client.authorized",
      resource: { kind: "mcp_clients", id: grant.id, name: grant.client_name ?? grant.client_id },
    });
    return (await op.commit()).ok;
  }

  /** The grant `id` of `teamId` with its versionstamp. */
  async grant(teamId: string, id: string): Promise<Deno.KvEntryMaybe<OAuthGrantRecord>> {
    return await this.#kv.get<OAuthGrantRecord>(K.oauthGrant(teamId, id));
  }

  /** What the refresh token of hash `hash` belongs to, or null. */
  async refreshRef(hash: string): Promise<RefreshRef | null> {
    return (await this.#kv.get<RefreshRef>(K.oauthRefresh(hash))).value;
  }

  /**
   * Replaces a grant's refresh token by `next.refresh_hash` if the grant did not change since
   * `entry` was read; the old hash stays known as retired. False on a concurrent change.
   */
  async rotate(entry: Deno.KvEntry<OAuthGrantRecord>, next: OAuthGrantRecord): Promise<boolean> {
    const now = this.#clock.now();
    const left = Math.max(1000, Date.parse(next.expires_at) - now);
    const retired: RefreshRef = { team_id: next.team_id, grant_id: next.id, current: false };
    const current: RefreshRef = { ...retired, current: true };
    const result = await this.#kv.atomic()
      .check(entry)
      .set(K.oauthGrant(next.team_id, next.id), next, { expireIn: left })
      .set(K.oauthRefresh(entry.value.refresh_hash), retired, { expireIn: RETIRED_REFRESH_MS })
      .set(K.oauthRefresh(next.refresh_hash), current, { expireIn: left })
      .commit();
    return result.ok;
  }

  /**
   * Deletes a grant (its access and refresh tokens stop working); false when there was none.
   * `action` names why in the audit log.
   */
  async revokeGrant(
    teamId: string,
    id: string,
    actor: Actor,
    action = "mcp_client.revoked",
  ): Promise<boolean> {
    const entry = await this.grant(teamId, id);
    if (!entry.value) return false;
    const op = this.#kv.atomic()
      .check(entry)
      .delete(K.oauthGrant(teamId, id))
      .delete(K.oauthRefresh(entry.value.refresh_hash));
    addAudit(op, teamId, this.#clock.now(), {
      actor,
      action,
      resource: {
        kind: "mcp_clients",
        id,
        name: entry.value.client_name ?? entry.value.client_id,
      },
    });
    return (await op.commit()).ok || !(await this.grant(teamId, id)).value;
  }

  /** The live grants of a team (optionally one user's), newest first. */
  async listGrants(teamId: string, userId?: string): Promise<OAuthGrantRecord[]> {
    const out: OAuthGrantRecord[] = [];
    const now = this.#clock.now();
    for await (
      const e of this.#kv.list<OAuthGrantRecord>({ prefix: K.oauthGrants(teamId) }, {
        reverse: true,
      })
    ) {
      if (userId && e.value.user_id !== userId) continue;
      if (Date.parse(e.value.expires_at) <= now) continue;
      out.push(e.value);
    }
    return out;
  }
}
