/**
 * API tokens and machine tokens. Secrets are never stored: an API token is kept as the SHA-256 of
 * its text (a global index maps the hash to the owning team), a machine token (a signed JWT) by
 * its `jti` under its team and gateway, which the token's verified claims name.
 */
import { type Clock, iso } from "../clock.ts";
import { type Actor, addAudit } from "./audit.ts";
import { StoreError } from "./errors.ts";
import { K } from "./keys.ts";

/** An API token as stored (no secret). */
export interface ApiTokenRecord {
  id: string;
  team_id: string;
  user_id: string;
  name: string;
  /** The first characters of the token, shown in lists to tell tokens apart. */
  prefix: string;
  /** SHA-256 (hex) of the token text. */
  hash: string;
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
  revoked_at: string | null;
}

/** A machine token as stored (no secret). */
export interface MachineTokenRecord {
  jti: string;
  team_id: string;
  gateway_id: string;
  issued_at: string;
  expires_at: string;
  revoked_at: string | null;
  /** The token this one replaced by renewal. */
  renewed_from: string | null;
  /** Who obtained it (`authorize`) or `renewal`. */
  issued_by: string;
  last_used_at: string | null;
}

/** How often `last_used_at` is written at most (it is informative, not exact). */
const LAST_USED_GRANULARITY_MS = 60_000;
/** Records of expired tokens are kept this long for the lists, then KV drops them. */
const KEEP_AFTER_EXPIRY_MS = 7 * 24 * 60 * 60 * 1000;

/** API and machine tokens over KV. */
export class TokenStore {
  #kv: Deno.Kv;
  #clock: Clock;

  constructor(kv: Deno.Kv, clock: Clock) {
    this.#kv = kv;
    this.#clock = clock;
  }

  /** Stores a new API token record and its hash index. */
  async addApiToken(record: ApiTokenRecord, actor: Actor): Promise<void> {
    const op = this.#kv.atomic()
      .check({ key: K.apiTokenByHash(record.hash), versionstamp: null })
      .set(K.apiToken(record.team_id, record.id), record)
      .set(K.apiTokenByHash(record.hash), { team_id: record.team_id, id: record.id });
    addAudit(op, record.team_id, this.#clock.now(), {
      actor,
      action: "api_token.created",
      resource: { kind: "api_tokens", id: record.id, name: record.name },
    });
    if (!(await op.commit()).ok) throw new StoreError("conflict", "token collision; retry");
  }

  /** The live API token whose hash is `hash`, or null (unknown or revoked). */
  async apiTokenByHash(hash: string): Promise<ApiTokenRecord | null> {
    const ref = (await this.#kv.get<{ team_id: string; id: string }>(K.apiTokenByHash(hash))).value;
    if (!ref) return null;
    const record = (await this.#kv.get<ApiTokenRecord>(K.apiToken(ref.team_id, ref.id))).value;
    return record && record.hash === hash && !record.revoked_at ? record : null;
  }

  /** API tokens of a team, optionally only one user's, newest first. */
  async listApiTokens(teamId: string, userId?: string): Promise<ApiTokenRecord[]> {
    const out: ApiTokenRecord[] = [];
    for await (
      const e of this.#kv.list<ApiTokenRecord>({ prefix: K.apiTokens(teamId) }, { reverse: true })
    ) {
      if (!userId || e.value.user_id === userId) out.push(e.value);
    }
    return out;
  }

  /** One API token of a team, or null. */
  async apiToken(teamId: string, id: string): Promise<ApiTokenRecord | null> {
    return (await this.#kv.get<ApiTokenRecord>(K.apiToken(teamId, id))).value;
  }

  /** Revokes an API token of the team (idempotent); null when it does not exist there. */
  async revokeApiToken(teamId: string, id: string, actor: Actor): Promise<ApiTokenRecord | null> {
    const entry = await this.#kv.get<ApiTokenRecord>(K.apiToken(teamId, id));
    if (!entry.value) return null;
    if (entry.value.revoked_at) return entry.value;
    const now = this.#clock.now();
    const next = { ...entry.value, revoked_at: iso(now) };
    const op = this.#kv.atomic().check(entry).set(K.apiToken(teamId, id), next)
      .delete(K.apiTokenByHash(entry.value.hash));
    addAudit(op, teamId, now, {
      actor,
      action: "api_token.revoked",
      resource: { kind: "api_tokens", id, name: entry.value.name },
    });
    if (!(await op.commit()).ok) return await this.revokeApiToken(teamId, id, actor);
    return next;
  }

  /** Notes a use of an API token (at most once a minute). */
  async touchApiToken(record: ApiTokenRecord): Promise<void> {
    const now = this.#clock.now();
    if (record.last_used_at && now - Date.parse(record.last_used_at) < LAST_USED_GRANULARITY_MS) {
      return;
    }
    const entry = await this.#kv.get<ApiTokenRecord>(K.apiToken(record.team_id, record.id));
    if (!entry.value || entry.value.revoked_at) return;
    await this.#kv.atomic().check(entry)
      .set(K.apiToken(record.team_id, record.id), { ...entry.value, last_used_at: iso(now) })
      .commit();
  }

  /** Stores a machine token record; when it renews another, that one ends within `graceMs`. */
  async addMachineToken(
    record: MachineTokenRecord,
    actor: Actor,
    renewal?: { previousJti: string; graceMs: number },
  ): Promise<void> {
    const now = this.#clock.now();
    const expireIn = Date.parse(record.expires_at) - now + KEEP_AFTER_EXPIRY_MS;
    const key = K.machineToken(record.team_id, record.gateway_id, record.jti);
    const op = this.#kv.atomic()
      .check({ key, versionstamp: null })
      .set(key, record, { expireIn });
    if (renewal) {
      const key = K.machineToken(record.team_id, record.gateway_id, renewal.previousJti);
      const prev = await this.#kv.get<MachineTokenRecord>(key);
      if (prev.value) {
        const end = Math.min(Date.parse(prev.value.expires_at), now + renewal.graceMs);
        op.check(prev).set(key, { ...prev.value, expires_at: iso(end) }, {
          expireIn: end - now + KEEP_AFTER_EXPIRY_MS,
        });
      }
    }
    addAudit(op, record.team_id, now, {
      actor,
      action: renewal ? "machine_token.renewed" : "machine_token.issued",
      resource: { kind: "machine_tokens", id: record.jti, name: record.gateway_id },
    });
    if (!(await op.commit()).ok) throw new StoreError("conflict", "concurrent renewal; retry");
  }

  /**
   * The machine token `jti` of a gateway of the team and the gateway record itself, read in one
   * batch (the caller knows both ids from the token's verified claims).
   */
  async machineTokenWithGateway<G>(
    teamId: string,
    gatewayId: string,
    jti: string,
  ): Promise<{ token: MachineTokenRecord | null; gateway: G | null }> {
    const [token, gateway] = await this.#kv.getMany<[MachineTokenRecord, G]>([
      K.machineToken(teamId, gatewayId, jti),
      K.record(teamId, "gateways", gatewayId),
    ]);
    return { token: token.value, gateway: gateway.value };
  }

  /** Machine tokens of a gateway of the team, newest first. */
  async listMachineTokens(teamId: string, gatewayId: string): Promise<MachineTokenRecord[]> {
    const out: MachineTokenRecord[] = [];
    for await (
      const e of this.#kv.list<MachineTokenRecord>({ prefix: K.machineTokens(teamId, gatewayId) })
    ) out.push(e.value);
    return out.sort((a, b) => b.issued_at.localeCompare(a.issued_at));
  }

  /** Revokes a machine token of a gateway of the team; null when it is not there. */
  async revokeMachineToken(
    teamId: string,
    gatewayId: string,
    jti: string,
    actor: Actor,
  ): Promise<MachineTokenRecord | null> {
    const key = K.machineToken(teamId, gatewayId, jti);
    const entry = await this.#kv.get<MachineTokenRecord>(key);
    if (!entry.value) return null;
    if (entry.value.revoked_at) return entry.value;
    const now = this.#clock.now();
    const next = { ...entry.value, revoked_at: iso(now) };
    const op = this.#kv.atomic().check(entry).set(key, next);
    addAudit(op, teamId, now, {
      actor,
      action: "machine_token.revoked",
      resource: { kind: "machine_tokens", id: jti, name: gatewayId },
    });
    if (!(await op.commit()).ok) {
      return await this.revokeMachineToken(teamId, gatewayId, jti, actor);
    }
    return next;
  }

  /** Notes a use of a machine token (at most once a minute). */
  async touchMachineToken(record: MachineTokenRecord): Promise<void> {
    const now = this.#clock.now();
    if (record.last_used_at && now - Date.parse(record.last_used_at) < LAST_USED_GRANULARITY_MS) {
      return;
    }
    const key = K.machineToken(record.team_id, record.gateway_id, record.jti);
    const entry = await this.#kv.get<MachineTokenRecord>(key);
    if (!entry.value) return;
    const expireIn = Date.parse(entry.value.expires_at) - now + KEEP_AFTER_EXPIRY_MS;
    await this.#kv.atomic().check(entry).set(key, { ...entry.value, last_used_at: iso(now) }, {
      expireIn,
    }).commit();
  }

  /** Keys of every machine token of a gateway (deleted with the gateway). */
  async machineTokenKeys(teamId: string, gatewayId: string): Promise<Deno.KvKey[]> {
    const keys: Deno.KvKey[] = [];
    for await (const e of this.#kv.list({ prefix: K.machineTokens(teamId, gatewayId) })) {
      keys.push(e.key);
    }
    return keys;
  }
}
