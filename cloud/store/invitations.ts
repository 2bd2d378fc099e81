/**
 * Invitations to a team by e-mail address. The code that accepts one is a secret: only its SHA-256
 * is stored, with a global index from that hash to the invitation. An invitation works once, until
 * it expires, and not after it was revoked; a newer invitation to the same address replaces a
 * pending one. Records stay 30 days past their expiry (for the lists and a precise refusal), then
 * KV drops them.
 */
import { type Clock, iso } from "../clock.ts";
import { type Actor, addAudit } from "./audit.ts";
import { StoreError } from "./errors.ts";
import type { Identity, Role, User } from "./identity.ts";
import { uuidv7 } from "./ids.ts";
import { K } from "./keys.ts";
import { listPage, type Page } from "./kv.ts";

/** An invitation as stored (the code itself never is). */
export interface InvitationRecord {
  id: string;
  team_id: string;
  /** The invited address, lower case; only the account with this e-mail can accept. */
  email: string;
  role: Role;
  /** SHA-256 (hex) of the code. */
  hash: string;
  created_at: string;
  /** Label of the actor that invited. */
  created_by: string;
  expires_at: string;
  accepted_at: string | null;
  /** The user who accepted. */
  accepted_by: string | null;
  revoked_at: string | null;
  revoked_by: string | null;
}

/** Where an invitation stands. */
export type InvitationState = "pending" | "accepted" | "revoked" | "expired";

/** The states, for filters. */
export const INVITATION_STATES: readonly InvitationState[] = [
  "pending",
  "accepted",
  "revoked",
  "expired",
];

/** Kept in KV this long after expiry. */
const KEEP_AFTER_EXPIRY_MS = 30 * 86_400_000;

/** The state of `r` at `now` (ms). */
export function invitationState(r: InvitationRecord, now: number): InvitationState {
  if (r.accepted_at) return "accepted";
  if (r.revoked_at) return "revoked";
  return Date.parse(r.expires_at) <= now ? "expired" : "pending";
}

/** Invitations over KV. */
export class InvitationStore {
  #kv: Deno.Kv;
  #clock: Clock;
  #identity: Identity;

  constructor(kv: Deno.Kv, clock: Clock, identity: Identity) {
    this.#kv = kv;
    this.#clock = clock;
    this.#identity = identity;
  }

  /**
   * Stores a new invitation of `teamId` for `email` (its code's hash is `hash`), revoking a pending
   * one to the same address in the same operation.
   */
  async create(
    teamId: string,
    actor: Actor,
    input: { email: string; role: Role; hash: string; expiresInMs: number },
  ): Promise<{ record: InvitationRecord; replaced: InvitationRecord | null }> {
    const now = this.#clock.now();
    const email = input.email.toLowerCase();
    const record: InvitationRecord = {
      id: uuidv7(now),
      team_id: teamId,
      email,
      role: input.role,
      hash: input.hash,
      created_at: iso(now),
      created_by: actor.label,
      expires_at: iso(now + input.expiresInMs),
      accepted_at: null,
      accepted_by: null,
      revoked_at: null,
      revoked_by: null,
    };
    const expireIn = input.expiresInMs + KEEP_AFTER_EXPIRY_MS;
    const byEmail = await this.#kv.get<string>(K.invitationByEmail(teamId, email));
    const op = this.#kv.atomic()
      .check(byEmail)
      .check({ key: K.invitationByHash(record.hash), versionstamp: null })
      .set(K.invitation(teamId, record.id), record, { expireIn })
      .set(K.invitationByHash(record.hash), { team_id: teamId, id: record.id }, { expireIn })
      .set(K.invitationByEmail(teamId, email), record.id, { expireIn });
    let replaced: InvitationRecord | null = null;
    if (byEmail.value) {
      const previous = await this.#kv.get<InvitationRecord>(K.invitation(teamId, byEmail.value));
      if (previous.value && invitationState(previous.value, now) === "pending") {
        replaced = { ...previous.value, revoked_at: iso(now), revoked_by: actor.label };
        op.check(previous).set(previous.key, replaced, { expireIn: this.#expireIn(replaced) });
        addAudit(op, teamId, now, {
          actor,
          action: "invitation.revoked",
          resource: { kind: "invitations", id: replaced.id, name: replaced.email },
        });
      }
    }
    addAudit(op, teamId, now, {
      actor,
      action: "invitation.created",
      resource: { kind: "invitations", id: record.id, name: email },
    });
    if (!(await op.commit()).ok) {
      throw new StoreError("conflict", "a concurrent change interfered; retry");
    }
    return { record, replaced };
  }

  /** The invitation `id` of the team, or null. */
  async get(teamId: string, id: string): Promise<InvitationRecord | null> {
    return (await this.#kv.get<InvitationRecord>(K.invitation(teamId, id))).value;
  }

  /** The invitation whose code hashes to `hash` (any state), or null. */
  async byHash(hash: string): Promise<Deno.KvEntry<InvitationRecord> | null> {
    const ref = (await this.#kv.get<{ team_id: string; id: string }>(K.invitationByHash(hash)))
      .value;
    if (!ref) return null;
    const entry = await this.#kv.get<InvitationRecord>(K.invitation(ref.team_id, ref.id));
    return entry.value && entry.value.hash === hash
      ? entry as Deno.KvEntry<InvitationRecord>
      : null;
  }

  /** A page of the team's invitations, newest first, optionally in one state. */
  list(
    teamId: string,
    page: { limit: number; cursor?: string; state?: InvitationState; email?: string },
  ): Promise<Page<InvitationRecord>> {
    const now = this.#clock.now();
    const email = page.email?.toLowerCase();
    return listPage<InvitationRecord>(this.#kv, K.invitations(teamId), {
      limit: page.limit,
      cursor: page.cursor,
      reverse: true,
      filter: (r) =>
        (!page.state || invitationState(r, now) === page.state) &&
        (!email || r.email.includes(email)),
    });
  }

  /** Revokes a pending invitation of the team (a used or ended one stays as it is); null if none. */
  async revoke(teamId: string, id: string, actor: Actor): Promise<InvitationRecord | null> {
    const entry = await this.#kv.get<InvitationRecord>(K.invitation(teamId, id));
    if (!entry.value) return null;
    const now = this.#clock.now();
    if (invitationState(entry.value, now) !== "pending") return entry.value;
    const next = { ...entry.value, revoked_at: iso(now), revoked_by: actor.label };
    const op = this.#kv.atomic().check(entry).set(entry.key, next, {
      expireIn: this.#expireIn(next),
    });
    addAudit(op, teamId, now, {
      actor,
      action: "invitation.revoked",
      resource: { kind: "invitations", id, name: next.email },
    });
    if (!(await op.commit()).ok) return await this.revoke(teamId, id, actor);
    return next;
  }

  /**
   * Accepts a pending invitation for the existing account `user` (already checked to be the
   * invited address): it joins with the invited role, or keeps its membership if it had one.
   * conflict when the invitation changed meanwhile (used, revoked).
   */
  async accept(entry: Deno.KvEntry<InvitationRecord>, user: User): Promise<InvitationRecord> {
    const now = this.#clock.now();
    const r = entry.value;
    const accepted = { ...r, accepted_at: iso(now), accepted_by: user.id };
    const actor: Actor = { type: "user", id: user.id, label: user.email, user_id: user.id };
    const mark = (op: Deno.AtomicOperation) => {
      op.check(entry).set(entry.key, accepted, { expireIn: this.#expireIn(accepted) });
      addAudit(op, r.team_id, now, {
        actor,
        action: "invitation.accepted",
        resource: { kind: "invitations", id: r.id, name: r.email },
      });
    };
    if (await this.#identity.membership(r.team_id, user.id)) {
      const op = this.#kv.atomic();
      mark(op);
      if (!(await op.commit()).ok) throw changed();
    } else {
      try {
        await this.#identity.addMember(r.team_id, user, r.role, actor, mark);
      } catch (err) {
        if (err instanceof StoreError && err.code === "conflict") throw changed();
        throw err;
      }
    }
    return accepted;
  }

  /** Creates the invited account and accepts the invitation in one operation. */
  async acceptWithNewUser(
    entry: Deno.KvEntry<InvitationRecord>,
    input: { name: string; passwordHash: string },
  ): Promise<{ user: User; invitation: InvitationRecord }> {
    const now = this.#clock.now();
    const r = entry.value;
    let accepted = r;
    const user = await this.#identity.createUserInTeam(
      { email: r.email, name: input.name, passwordHash: input.passwordHash },
      r.team_id,
      r.role,
      (op, user) => {
        accepted = { ...r, accepted_at: iso(now), accepted_by: user.id };
        op.check(entry).set(entry.key, accepted, { expireIn: this.#expireIn(accepted) });
        addAudit(op, r.team_id, now, {
          actor: { type: "user", id: user.id, label: user.email, user_id: user.id },
          action: "invitation.accepted",
          resource: { kind: "invitations", id: r.id, name: r.email },
        });
      },
    ).catch((err) => {
      throw err instanceof StoreError && err.code === "conflict" ? changed() : err;
    });
    return { user, invitation: accepted };
  }

  #expireIn(r: InvitationRecord): number {
    return Math.max(1000, Date.parse(r.expires_at) + KEEP_AFTER_EXPIRY_MS - this.#clock.now());
  }
}

function changed(): StoreError {
  return new StoreError(
    "conflict",
    "this invitation changed meanwhile (used or revoked); open the link again",
  );
}
