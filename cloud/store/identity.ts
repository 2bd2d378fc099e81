/** Users, teams and membership. A user always has a current team they belong to. */
import { type Clock, iso } from "../clock.ts";
import { type Actor, addAudit } from "./audit.ts";
import { StoreError } from "./errors.ts";
import { uuidv7 } from "./ids.ts";
import { K } from "./keys.ts";

/** A user account. */
export interface User {
  id: string;
  email: string;
  name: string;
  /** `pbkdf2-sha256$<iterations>$<salt b64>$<hash b64>` */
  password_hash: string;
  current_team_id: string;
  created_at: string;
  updated_at: string;
}

/** What the API shows of a user. */
export type PublicUser = Omit<User, "password_hash">;

/** A team: the owner of every resource. */
export interface Team {
  id: string;
  name: string;
  created_at: string;
  created_by: string;
}

/** Roles in a team: owners manage membership; members manage resources. */
export type Role = "owner" | "member";

/** A user's membership of a team. */
export interface Membership {
  team_id: string;
  user_id: string;
  role: Role;
  created_at: string;
}

/** Strips the password hash. */
export function publicUser(user: User): PublicUser {
  const { password_hash: _, ...rest } = user;
  return rest;
}

/** Users, teams and memberships over KV. */
export class Identity {
  #kv: Deno.Kv;
  #clock: Clock;

  constructor(kv: Deno.Kv, clock: Clock) {
    this.#kv = kv;
    this.#clock = clock;
  }

  /** Creates a user and their first team (of which they are the owner); fails if the email is taken. */
  async createUser(
    input: { email: string; name: string; passwordHash: string; teamName: string },
  ): Promise<{ user: User; team: Team }> {
    const now = this.#clock.now();
    const userId = uuidv7(now);
    const team: Team = {
      id: uuidv7(now),
      name: input.teamName,
      created_at: iso(now),
      created_by: userId,
    };
    const user: User = {
      id: userId,
      email: input.email.toLowerCase(),
      name: input.name,
      password_hash: input.passwordHash,
      current_team_id: team.id,
      created_at: iso(now),
      updated_at: iso(now),
    };
    const op = this.#kv.atomic()
      .check({ key: K.userByEmail(user.email), versionstamp: null })
      .set(K.userByEmail(user.email), user.id)
      .set(K.user(user.id), user);
    this.#addTeam(op, team, user, now);
    if (!(await op.commit()).ok) {
      throw new StoreError("name_taken", "email: an account with this email already exists", {
        field: "email",
      });
    }
    return { user, team };
  }

  /** The user `id`, or null. */
  async user(id: string): Promise<User | null> {
    return (await this.#kv.get<User>(K.user(id))).value;
  }

  /** The user with `email` (case-insensitive), or null. */
  async userByEmail(email: string): Promise<User | null> {
    const id = (await this.#kv.get<string>(K.userByEmail(email))).value;
    return id ? await this.user(id) : null;
  }

  /** Replaces a user's password hash (rehash on sign-in, password change). */
  async setPasswordHash(userId: string, hash: string): Promise<void> {
    await this.#updateUser(userId, (u) => ({ ...u, password_hash: hash }));
  }

  /**
   * Creates a team owned by `user`. Their current team stays as it was: switching is the user's
   * own step (the header's switcher, `PUT /api/me/current-team`).
   */
  async createTeam(user: User, name: string): Promise<Team> {
    const now = this.#clock.now();
    const team: Team = { id: uuidv7(now), name, created_at: iso(now), created_by: user.id };
    const op = this.#kv.atomic();
    this.#addTeam(op, team, user, now);
    await op.commit();
    return team;
  }

  /**
   * Creates a user who joins the existing team `teamId` (their current team) instead of getting a
   * team of their own: an accepted invitation. `extra` adds the caller's checks and writes to the
   * same atomic operation (name_taken: the email has an account; conflict: a check failed).
   */
  async createUserInTeam(
    input: { email: string; name: string; passwordHash: string },
    teamId: string,
    role: Role,
    extra: (op: Deno.AtomicOperation, user: User) => void,
  ): Promise<User> {
    const now = this.#clock.now();
    const user: User = {
      id: uuidv7(now),
      email: input.email.toLowerCase(),
      name: input.name,
      password_hash: input.passwordHash,
      current_team_id: teamId,
      created_at: iso(now),
      updated_at: iso(now),
    };
    const op = this.#kv.atomic()
      .check({ key: K.userByEmail(user.email), versionstamp: null })
      .set(K.userByEmail(user.email), user.id)
      .set(K.user(user.id), user)
      .set(
        K.member(teamId, user.id),
        { team_id: teamId, user_id: user.id, role, created_at: iso(now) } satisfies Membership,
      )
      .set(K.userTeam(user.id, teamId), role);
    addAudit(op, teamId, now, {
      actor: { type: "user", id: user.id, label: user.email, user_id: user.id },
      action: "member.added",
      resource: { kind: "members", id: user.id, name: user.email },
    });
    extra(op, user);
    if (!(await op.commit()).ok) {
      if (await this.userByEmail(user.email)) {
        throw new StoreError("name_taken", "email: an account with this email already exists", {
          field: "email",
        });
      }
      throw new StoreError("conflict", "a concurrent change interfered; retry");
    }
    return user;
  }

  /** The team `id`, or null. */
  async team(id: string): Promise<Team | null> {
    return (await this.#kv.get<Team>(K.team(id))).value;
  }

  /** The teams of a user with their role, oldest first. */
  async teamsOf(userId: string): Promise<{ team: Team; role: Role }[]> {
    const out: { team: Team; role: Role }[] = [];
    for await (const e of this.#kv.list<Role>({ prefix: K.userTeams(userId) })) {
      const team = await this.team(e.key[2] as string);
      if (team) out.push({ team, role: e.value });
    }
    return out.sort((a, b) => a.team.created_at.localeCompare(b.team.created_at));
  }

  /** The membership of `userId` in `teamId`, or null. */
  async membership(teamId: string, userId: string): Promise<Membership | null> {
    return (await this.#kv.get<Membership>(K.member(teamId, userId))).value;
  }

  /** Members of a team with their public user records. */
  async members(teamId: string): Promise<{ user: PublicUser; role: Role; since: string }[]> {
    const out: { user: PublicUser; role: Role; since: string }[] = [];
    for await (const e of this.#kv.list<Membership>({ prefix: K.members(teamId) })) {
      const user = await this.user(e.value.user_id);
      if (user) out.push({ user: publicUser(user), role: e.value.role, since: e.value.created_at });
    }
    return out;
  }

  /**
   * Adds (or changes the role of) a member. `extra` adds the caller's checks and writes to the
   * same atomic operation (conflict when one of its checks fails).
   */
  async addMember(
    teamId: string,
    user: User,
    role: Role,
    actor: Actor,
    extra?: (op: Deno.AtomicOperation) => void,
  ): Promise<Membership> {
    const now = this.#clock.now();
    const m: Membership = { team_id: teamId, user_id: user.id, role, created_at: iso(now) };
    const existing = await this.membership(teamId, user.id);
    if (existing?.role === "owner" && role !== "owner") {
      await this.#assertAnotherOwner(teamId, user.id);
    }
    const op = this.#kv.atomic()
      .set(K.member(teamId, user.id), existing ? { ...existing, role } : m)
      .set(K.userTeam(user.id, teamId), role);
    addAudit(op, teamId, now, {
      actor,
      action: existing ? "member.updated" : "member.added",
      resource: { kind: "members", id: user.id, name: user.email },
    });
    extra?.(op);
    if (!(await op.commit()).ok) {
      throw new StoreError("conflict", "a concurrent change interfered; retry");
    }
    return existing ? { ...existing, role } : m;
  }

  /** Removes a member (never the last owner); their current team moves to another of theirs. */
  async removeMember(teamId: string, userId: string, actor: Actor): Promise<void> {
    const m = await this.membership(teamId, userId);
    if (!m) throw new StoreError("not_found", "member not found");
    if (m.role === "owner") await this.#assertAnotherOwner(teamId, userId);
    const user = await this.user(userId);
    const op = this.#kv.atomic()
      .delete(K.member(teamId, userId))
      .delete(K.userTeam(userId, teamId));
    addAudit(op, teamId, this.#clock.now(), {
      actor,
      action: "member.removed",
      resource: { kind: "members", id: userId, name: user?.email },
    });
    await op.commit();
    if (user?.current_team_id === teamId) {
      const rest = await this.teamsOf(userId);
      if (rest.length) await this.switchTeam(userId, rest[0].team.id);
    }
  }

  /** Makes `teamId` the user's current team; fails unless they are a member. */
  async switchTeam(userId: string, teamId: string): Promise<User> {
    if (!(await this.membership(teamId, userId))) {
      throw new StoreError("not_found", "team not found");
    }
    return await this.#updateUser(userId, (u) => ({ ...u, current_team_id: teamId }));
  }

  #addTeam(op: Deno.AtomicOperation, team: Team, user: User, now: number): void {
    op.check({ key: K.team(team.id), versionstamp: null })
      .set(K.team(team.id), team)
      .set(
        K.member(team.id, user.id),
        {
          team_id: team.id,
          user_id: user.id,
          role: "owner",
          created_at: iso(now),
        } satisfies Membership,
      )
      .set(K.userTeam(user.id, team.id), "owner");
    addAudit(op, team.id, now, {
      actor: { type: "user", id: user.id, label: user.email, user_id: user.id },
      action: "team.created",
      resource: { kind: "teams", id: team.id, name: team.name },
    });
  }

  async #assertAnotherOwner(teamId: string, userId: string): Promise<void> {
    for await (const e of this.#kv.list<Membership>({ prefix: K.members(teamId) })) {
      if (e.value.role === "owner" && e.value.user_id !== userId) return;
    }
    throw new StoreError("conflict", "a team needs at least one owner; add another owner first");
  }

  async #updateUser(userId: string, change: (u: User) => User): Promise<User> {
    for (let i = 0; i < 8; i++) {
      const entry = await this.#kv.get<User>(K.user(userId));
      if (!entry.value) throw new StoreError("not_found", "user not found");
      const next = { ...change(entry.value), updated_at: iso(this.#clock.now()) };
      if ((await this.#kv.atomic().check(entry).set(K.user(userId), next).commit()).ok) return next;
    }
    throw new StoreError("conflict", "too many concurrent changes; retry");
  }
}
