/**
 * Inviting people to a team by e-mail address, for the REST API and the web UI alike. Only owners
 * invite, list and revoke. The invitation's code (in its link) is shown once and stored only as a
 * hash; it works once, for 7 days unless said otherwise (at most 30), and not once revoked. Only
 * the account with the invited address accepts it: a signed-in user with that e-mail, or a new
 * account made from the link for that address. No e-mail is sent: the owner passes the link on.
 */
import type { Clock } from "../clock.ts";
import {
  type InvitationRecord,
  type InvitationState,
  invitationState,
  type Page,
  randomBase64Url,
  type Role,
  sha256Hex,
  type Store,
  StoreError,
  type Team,
  type User,
} from "../store/mod.ts";
import type { TeamCaller } from "./teams.ts";

/** Days an invitation works when the inviter does not say. */
export const INVITATION_DAYS = 7;
/** The longest an invitation may work, days. */
export const MAX_INVITATION_DAYS = 30;
/** Every invitation code starts with this. */
export const INVITATION_CODE_PREFIX = "gwi_";
const CODE_PATTERN = /^gwi_[A-Za-z0-9_-]{43}$/;

/** A new invitation: the record, its code and link (shown once), and what it replaced. */
export interface IssuedInvitation {
  record: InvitationRecord;
  code: string;
  url: string;
  /** A pending invitation to the same address that this one revoked. */
  replaced: InvitationRecord | null;
}

/** An invitation looked up by its code, with where it stands and its team. */
export interface FoundInvitation {
  entry: Deno.KvEntry<InvitationRecord>;
  state: InvitationState;
  team: Team;
}

/** An invitation as the API shows it: its state, never the hash. */
export type InvitationView = Omit<InvitationRecord, "hash"> & { state: InvitationState };

/** Invitation operations. */
export class InvitationService {
  readonly #store: Store;
  readonly #baseUrl: string;
  readonly #clock: Clock;

  constructor(store: Store, baseUrl: string, clock: Clock) {
    this.#store = store;
    this.#baseUrl = baseUrl.replace(/\/+$/, "");
    this.#clock = clock;
  }

  /** The link that opens the invitation with `code`. */
  linkOf(code: string): string {
    return `${this.#baseUrl}/invitations/accept?code=${encodeURIComponent(code)}`;
  }

  /** What the API shows of a record. */
  view(r: InvitationRecord): InvitationView {
    const { hash: _, ...rest } = r;
    return { ...rest, state: invitationState(r, this.#clock.now()) };
  }

  /**
   * Invites `email` to the caller's team (owners only; conflict when that account is a member
   * already). A pending invitation to the same address is revoked by the new one.
   */
  async invite(
    caller: TeamCaller,
    input: { email: string; role: Role; expiresInDays?: number },
  ): Promise<IssuedInvitation> {
    ownerOnly(caller);
    const email = input.email.trim().toLowerCase();
    const days = input.expiresInDays ?? INVITATION_DAYS;
    if (!Number.isInteger(days) || days < 1 || days > MAX_INVITATION_DAYS) {
      throw new StoreError("invalid", `expires_in_days: 1-${MAX_INVITATION_DAYS}`, {
        field: "expires_in_days",
      });
    }
    const existing = await this.#store.identity.userByEmail(email);
    if (existing && await this.#store.identity.membership(caller.team.id, existing.id)) {
      throw new StoreError("conflict", `${email} is already a member of this team`, {
        field: "email",
      });
    }
    const code = `${INVITATION_CODE_PREFIX}${randomBase64Url(32)}`;
    const { record, replaced } = await this.#store.invitations.create(
      caller.team.id,
      caller.actor,
      { email, role: input.role, hash: await sha256Hex(code), expiresInMs: days * 86_400_000 },
    );
    return { record, code, url: this.linkOf(code), replaced };
  }

  /** A page of the team's invitations, newest first (owners only). */
  list(
    caller: TeamCaller,
    page: { limit: number; cursor?: string; state?: InvitationState; email?: string },
  ): Promise<Page<InvitationRecord>> {
    ownerOnly(caller);
    return this.#store.invitations.list(caller.team.id, page);
  }

  /** Revokes an invitation of the team (owners only; not_found for any other). */
  async revoke(caller: TeamCaller, id: string): Promise<InvitationRecord> {
    ownerOnly(caller);
    const revoked = await this.#store.invitations.revoke(caller.team.id, id, caller.actor);
    if (!revoked) throw new StoreError("not_found", "invitation not found");
    return revoked;
  }

  /** The invitation with `code` in whatever state it is; not_found for an unknown code. */
  async find(code: string): Promise<FoundInvitation> {
    const entry = CODE_PATTERN.test(code)
      ? await this.#store.invitations.byHash(await sha256Hex(code))
      : null;
    const team = entry && await this.#store.identity.team(entry.value.team_id);
    if (!entry || !team) {
      throw new StoreError(
        "not_found",
        "invitation not found: check the link, or ask for a new one",
      );
    }
    return { entry, state: invitationState(entry.value, this.#clock.now()), team };
  }

  /** The invitation with `code` if it can still be accepted; a refusal that says why otherwise. */
  async usable(code: string): Promise<FoundInvitation> {
    const found = await this.find(code);
    if (found.state !== "pending") throw refusal(found);
    return found;
  }

  /**
   * Accepts the invitation with `code` for the signed-in `user`, whose e-mail must be the invited
   * address (forbidden otherwise). Their current team does not change.
   */
  async accept(
    user: User,
    code: string,
  ): Promise<{ invitation: InvitationRecord; team: Team; role: Role; alreadyMember: boolean }> {
    const found = await this.usable(code);
    const invited = found.entry.value.email;
    if (user.email.toLowerCase() !== invited) {
      throw new StoreError(
        "forbidden",
        `this invitation is for ${invited}; sign in with that account to accept it`,
      );
    }
    const before = await this.#store.identity.membership(found.team.id, user.id);
    const invitation = await this.#store.invitations.accept(found.entry, user);
    return {
      invitation,
      team: found.team,
      role: before?.role ?? invitation.role,
      alreadyMember: before !== null,
    };
  }

  /**
   * Creates the account of the invited address from the link (name and password hash given) and
   * accepts the invitation: the new user's one team is the inviting team. name_taken when the
   * address has an account (then sign in and accept).
   */
  async acceptNewAccount(
    code: string,
    input: { name: string; passwordHash: string },
  ): Promise<{ user: User; team: Team }> {
    const found = await this.usable(code);
    if (await this.#store.identity.userByEmail(found.entry.value.email)) {
      throw new StoreError(
        "name_taken",
        "email: an account with this email already exists; sign in to accept",
        { field: "email" },
      );
    }
    const { user } = await this.#store.invitations.acceptWithNewUser(found.entry, input);
    return { user, team: found.team };
  }
}

/** Why an invitation that is not pending cannot be accepted (`details.state` says which). */
function refusal(found: FoundInvitation): StoreError {
  const r = found.entry.value;
  const message = found.state === "accepted"
    ? "this invitation was already used; each invitation works once"
    : found.state === "revoked"
    ? "this invitation was revoked; ask an owner of the team for a new one"
    : `this invitation expired at ${r.expires_at}; ask an owner of the team for a new one`;
  return new StoreError("conflict", message, { details: { state: found.state } });
}

function ownerOnly(caller: TeamCaller): void {
  if (caller.role !== "owner") {
    throw new StoreError("forbidden", "only team owners manage invitations");
  }
}
