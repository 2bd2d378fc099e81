/**
 * Shares: a team grants another team read or write access to one of its records. The grant is
 * indexed under the receiving team (`shares_in`), which is the only way a team ever reaches a
 * record of another team.
 */
import { type Clock, iso } from "../clock.ts";
import { type Actor, addAudit } from "./audit.ts";
import { StoreError } from "./errors.ts";
import { uuidv7 } from "./ids.ts";
import { K, type ResourceKind } from "./keys.ts";

/** What a share allows: `read` (get) or `write` (get and update; never delete). */
export type ShareAccess = "read" | "write";

/** A share as stored under the owning team. */
export interface ShareRecord {
  id: string;
  team_id: string;
  resource_kind: ResourceKind;
  resource_id: string;
  resource_name: string;
  target_team_id: string;
  access: ShareAccess;
  created_at: string;
  created_by: string;
}

/** The receiving side's index entry. */
export interface IncomingShare {
  share_id: string;
  owner_team_id: string;
  access: ShareAccess;
}

/** Shares over KV. */
export class ShareStore {
  #kv: Deno.Kv;
  #clock: Clock;

  constructor(kv: Deno.Kv, clock: Clock) {
    this.#kv = kv;
    this.#clock = clock;
  }

  /** Shares a record of `teamId` with `targetTeamId`; conflict when already shared with it. */
  async create(
    teamId: string,
    actor: Actor,
    input: {
      kind: ResourceKind;
      resourceId: string;
      resourceName: string;
      targetTeamId: string;
      access: ShareAccess;
    },
  ): Promise<ShareRecord> {
    const now = this.#clock.now();
    const share: ShareRecord = {
      id: uuidv7(now),
      team_id: teamId,
      resource_kind: input.kind,
      resource_id: input.resourceId,
      resource_name: input.resourceName,
      target_team_id: input.targetTeamId,
      access: input.access,
      created_at: iso(now),
      created_by: actor.label,
    };
    const inKey = K.shareIn(input.targetTeamId, input.kind, input.resourceId);
    const resource = await this.#kv.get(K.record(teamId, input.kind, input.resourceId));
    if (!resource.value) throw new StoreError("not_found", `${input.kind} not found`);
    const op = this.#kv.atomic()
      .check(resource)
      .check({ key: inKey, versionstamp: null })
      .set(K.share(teamId, share.id), share)
      .set(inKey, { share_id: share.id, owner_team_id: teamId, access: share.access })
      .set(K.shareByResource(teamId, input.kind, input.resourceId, share.id), input.targetTeamId);
    const resourceRef = {
      kind: "shares",
      id: share.id,
      name: `${input.kind}/${input.resourceName}`,
    };
    addAudit(op, teamId, now, { actor, action: "share.created", resource: resourceRef });
    addAudit(op, input.targetTeamId, now, {
      actor,
      action: "share.received",
      resource: resourceRef,
    });
    if (!(await op.commit()).ok) {
      throw new StoreError(
        "conflict",
        "this record is already shared with that team; delete that share to change it",
        { field: "team_id" },
      );
    }
    return share;
  }

  /** The share `id` of the owning team, or null. */
  async get(teamId: string, id: string): Promise<ShareRecord | null> {
    return (await this.#kv.get<ShareRecord>(K.share(teamId, id))).value;
  }

  /** Shares the team granted. */
  async outgoing(teamId: string): Promise<ShareRecord[]> {
    const out: ShareRecord[] = [];
    for await (const e of this.#kv.list<ShareRecord>({ prefix: K.shares(teamId) })) {
      out.push(e.value);
    }
    return out;
  }

  /** Shares the team received (the owner's share records). */
  async incoming(teamId: string): Promise<ShareRecord[]> {
    const out: ShareRecord[] = [];
    for await (const e of this.#kv.list<IncomingShare>({ prefix: K.sharesIn(teamId) })) {
      const share = await this.get(e.value.owner_team_id, e.value.share_id);
      if (share) out.push(share);
    }
    return out;
  }

  /** The grant `viewerTeamId` holds on another team's record `kind`/`id`, or null. */
  async grant(viewerTeamId: string, kind: ResourceKind, id: string): Promise<IncomingShare | null> {
    return (await this.#kv.get<IncomingShare>(K.shareIn(viewerTeamId, kind, id))).value;
  }

  /** Revokes a share of the owning team; null when it is not there. */
  async delete(teamId: string, actor: Actor, id: string): Promise<ShareRecord | null> {
    const share = await this.get(teamId, id);
    if (!share) return null;
    const op = this.#kv.atomic();
    for (const key of this.#keysOf(share)) op.delete(key);
    const now = this.#clock.now();
    const resourceRef = {
      kind: "shares",
      id,
      name: `${share.resource_kind}/${share.resource_name}`,
    };
    addAudit(op, teamId, now, { actor, action: "share.deleted", resource: resourceRef });
    addAudit(op, share.target_team_id, now, {
      actor,
      action: "share.revoked",
      resource: resourceRef,
    });
    await op.commit();
    return share;
  }

  /** Keys of every share of a record (deleted with the record). */
  async keysOfResource(teamId: string, kind: ResourceKind, id: string): Promise<Deno.KvKey[]> {
    const keys: Deno.KvKey[] = [];
    for await (const e of this.#kv.list({ prefix: K.sharesByResource(teamId, kind, id) })) {
      const share = await this.get(teamId, e.key[5] as string);
      if (share) keys.push(...this.#keysOf(share));
    }
    return keys;
  }

  #keysOf(share: ShareRecord): Deno.KvKey[] {
    return [
      K.share(share.team_id, share.id),
      K.shareIn(share.target_team_id, share.resource_kind, share.resource_id),
      K.shareByResource(share.team_id, share.resource_kind, share.resource_id, share.id),
    ];
  }
}
