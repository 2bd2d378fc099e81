/**
 * The rules of a team's membership and API tokens, for the REST API and the web UI alike: only
 * owners add and remove members (never the last owner, store/identity.ts), a member must already
 * have an account, owners see and revoke every API token (and every MCP client approval) of the
 * team and members their own.
 * Refusals are StoreErrors (forbidden, not_found) that each face words its own way.
 */
import {
  type Actor,
  type ApiTokenRecord,
  K,
  listPage,
  type Membership,
  type OAuthGrantRecord,
  type Page,
  type Role,
  type Store,
  StoreError,
} from "../store/mod.ts";

/** Where an API token stands. */
export type TokenState = "active" | "revoked" | "expired";

/** What a list of API tokens asks for: a page, a name substring, a state. */
export interface TokenQuery {
  limit: number;
  cursor?: string;
  name?: string;
  state?: TokenState;
}

/** Who is asking: a user acting in their current team. */
export interface TeamCaller {
  user: { id: string };
  team: { id: string };
  role: Role;
  actor: Actor;
}

/** Membership and API-token operations of the caller's current team. */
export class TeamService {
  readonly #store: Store;

  constructor(store: Store) {
    this.#store = store;
  }

  /** Adds the account with `email` to the team, or changes its role (owners only). */
  async addMember(caller: TeamCaller, email: string, role: Role): Promise<Membership> {
    this.#ownerOnly(caller);
    const user = await this.#store.identity.userByEmail(email.trim());
    if (!user) throw new StoreError("not_found", "user not found", { field: "email" });
    return await this.#store.identity.addMember(caller.team.id, user, role, caller.actor);
  }

  /** Removes a member from the team (owners only; the store keeps the last owner). */
  async removeMember(caller: TeamCaller, userId: string): Promise<void> {
    this.#ownerOnly(caller);
    await this.#store.identity.removeMember(caller.team.id, userId, caller.actor);
  }

  /** The API tokens the caller may see: all of the team for owners, their own for members. */
  apiTokens(caller: TeamCaller): Promise<ApiTokenRecord[]> {
    const onlyOf = caller.role === "owner" ? undefined : caller.user.id;
    return this.#store.tokens.listApiTokens(caller.team.id, onlyOf);
  }

  /**
   * A page of the API tokens the caller may see, newest first, filtered by a name substring
   * (case-insensitive) and a state (`now`: the time that decides expiry).
   */
  apiTokenPage(caller: TeamCaller, query: TokenQuery, now: number): Promise<Page<ApiTokenRecord>> {
    const onlyOf = caller.role === "owner" ? undefined : caller.user.id;
    const name = query.name?.toLowerCase();
    return listPage<ApiTokenRecord>(this.#store.kv, K.apiTokens(caller.team.id), {
      limit: query.limit,
      cursor: query.cursor,
      reverse: true,
      filter: (t) =>
        (!onlyOf || t.user_id === onlyOf) &&
        (!name || t.name.toLowerCase().includes(name)) &&
        (!query.state || tokenState(t, now) === query.state),
    });
  }

  /** Revokes an API token the caller may see; not_found for any other. */
  async revokeApiToken(caller: TeamCaller, id: string): Promise<ApiTokenRecord> {
    const existing = await this.#store.tokens.apiToken(caller.team.id, id);
    const visible = existing && (caller.role === "owner" || existing.user_id === caller.user.id);
    const revoked = visible &&
      await this.#store.tokens.revokeApiToken(caller.team.id, id, caller.actor);
    if (!revoked) throw new StoreError("not_found", "API token not found");
    return revoked;
  }

  /** The MCP clients approved in the team: all of them for owners, their own for members. */
  mcpGrants(caller: TeamCaller): Promise<OAuthGrantRecord[]> {
    const onlyOf = caller.role === "owner" ? undefined : caller.user.id;
    return this.#store.oauth.listGrants(caller.team.id, onlyOf);
  }

  /** Revokes an MCP client approval the caller may see; not_found for any other. */
  async revokeMcpGrant(caller: TeamCaller, id: string): Promise<void> {
    const existing = (await this.#store.oauth.grant(caller.team.id, id)).value;
    const visible = existing && (caller.role === "owner" || existing.user_id === caller.user.id);
    if (!visible || !(await this.#store.oauth.revokeGrant(caller.team.id, id, caller.actor))) {
      throw new StoreError("not_found", "MCP client approval not found");
    }
  }

  #ownerOnly(caller: TeamCaller): void {
    if (caller.role !== "owner") {
      throw new StoreError("forbidden", "only team owners manage members");
    }
  }
}

/** The state of an API token at `now` (ms). */
export function tokenState(t: ApiTokenRecord, now: number): TokenState {
  if (t.revoked_at) return "revoked";
  return t.expires_at && Date.parse(t.expires_at) <= now ? "expired" : "active";
}
