/**
 * Who is calling: a bearer token (API token, user token or machine token) resolved to a user and
 * team, or to a gateway. A user principal acts in exactly one team: the team of its API token, or
 * the `team` claim of its user token, and only while the user is still a member.
 */
import type {
  Actor,
  ApiTokenRecord,
  GatewayRecord,
  MachineTokenRecord,
  OAuthGrantRecord,
  Role,
  Team,
  User,
} from "../store/mod.ts";
import { sha256Hex } from "../store/mod.ts";
import type { CloudOptions } from "../options.ts";
import type { Store } from "../store/mod.ts";
import {
  decodeTokenClaims,
  MACHINE_TOKEN_AUDIENCE,
  type MachineAbility,
} from "../../shared/mod.ts";
import { TokenError, type Tokens } from "./jwt.ts";
import { mcpResource } from "./mcp_oauth.ts";

/** Prefix of API tokens (so secret scanners and people can recognize them). */
export const API_TOKEN_PREFIX = "gwc_";

/** A user acting in a team. */
export interface UserPrincipal {
  kind: "user_token" | "api_token" | "session" | "mcp_access";
  user: User;
  team: Team;
  role: Role;
  /** The API token (api_token callers). */
  apiToken?: ApiTokenRecord;
  /** The jti of the user token (user_token callers). */
  tokenId?: string;
  /** The approval behind an MCP access token (mcp_access callers). */
  grant?: OAuthGrantRecord;
  actor: Actor;
}

/** A gateway calling with its machine token. */
export interface MachinePrincipal {
  kind: "machine";
  teamId: string;
  gatewayId: string;
  gatewayCode: string;
  abilities: MachineAbility[];
  token: MachineTokenRecord;
  actor: Actor;
}

/** Any authenticated caller. */
export type Principal = UserPrincipal | MachinePrincipal;

/** The kinds of bearer token. */
export type BearerKind = "api_token" | "user_token" | "machine" | "mcp_access";

/** The credential of an `Authorization: Bearer` header, or undefined. */
export function bearerToken(header: string | undefined): string | undefined {
  const m = /^Bearer[ ]+([A-Za-z0-9._~+/-]+=*)\s*$/i.exec(header ?? "");
  return m?.[1];
}

/** Which kind of token `token` is, from its form alone. */
export function bearerKind(token: string): BearerKind | undefined {
  if (token.startsWith(API_TOKEN_PREFIX)) return "api_token";
  const claims = decodeTokenClaims(token);
  if (!claims) return undefined;
  if ((claims as { token_use?: unknown }).token_use === "mcp") return "mcp_access";
  const aud = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
  return aud.includes(MACHINE_TOKEN_AUDIENCE) ? "machine" : "user_token";
}

/**
 * What resolving a bearer token reads: the clock and base URL, the stores of tokens, members and
 * OAuth grants, and the verifiers of the three JWT kinds.
 */
export interface Authenticator {
  options: Pick<CloudOptions, "clock" | "baseUrl">;
  store: Pick<Store, "tokens" | "identity" | "oauth">;
  jwt: Pick<Tokens, "verifyUserToken" | "verifyMcpAccessToken" | "verifyMachineToken">;
}

/**
 * Resolves a bearer token; throws TokenError with the reason when it is not usable. `kind`: what
 * {@link bearerKind} said of it already (the form only; every kind is verified here).
 */
export async function authenticate(
  s: Authenticator,
  token: string,
  kind: BearerKind | undefined = bearerKind(token),
): Promise<Principal> {
  if (kind === "api_token") return await fromApiToken(s, token);
  if (kind === "user_token") return await fromUserToken(s, token);
  if (kind === "machine") return await fromMachineToken(s, token);
  if (kind === "mcp_access") return await fromMcpAccessToken(s, token);
  throw new TokenError("malformed token");
}

async function fromApiToken(s: Authenticator, token: string): Promise<UserPrincipal> {
  if (!/^gwc_[A-Za-z0-9_-]{43}$/.test(token)) throw new TokenError("malformed API token");
  const record = await s.store.tokens.apiTokenByHash(await sha256Hex(token));
  if (!record) throw new TokenError("unknown or revoked API token");
  if (record.expires_at && Date.parse(record.expires_at) <= s.options.clock.now()) {
    throw new TokenError("API token expired");
  }
  const member = await memberOf(s, record.user_id, record.team_id);
  s.store.tokens.touchApiToken(record).catch(() => {});
  return {
    kind: "api_token",
    ...member,
    apiToken: record,
    actor: {
      type: "api_token",
      id: record.id,
      label: `${record.name} (${member.user.email})`,
      user_id: member.user.id,
    },
  };
}

async function fromUserToken(s: Authenticator, token: string): Promise<UserPrincipal> {
  const claims = await s.jwt.verifyUserToken(token);
  const member = await memberOf(s, claims.sub, claims.team.id);
  return {
    kind: "user_token",
    ...member,
    tokenId: claims.jti,
    actor: { type: "user", id: member.user.id, label: member.user.email, user_id: member.user.id },
  };
}

async function fromMcpAccessToken(s: Authenticator, token: string): Promise<UserPrincipal> {
  // The audience must be this service's MCP resource (RFC 8707): a token minted for another
  // resource, or a user token, does not pass.
  const claims = await s.jwt.verifyMcpAccessToken(token, mcpResource(s));
  const grant = (await s.store.oauth.grant(claims.team_id, claims.grant_id)).value;
  if (!grant || grant.user_id !== claims.sub || grant.client_id !== claims.client_id) {
    throw new TokenError("the authorization of this token was revoked");
  }
  if (Date.parse(grant.expires_at) <= s.options.clock.now()) {
    throw new TokenError("the authorization of this token expired");
  }
  const member = await memberOf(s, claims.sub, claims.team_id);
  return {
    kind: "mcp_access",
    ...member,
    grant,
    actor: {
      type: "mcp_client",
      id: grant.id,
      label: `${grant.client_name ?? grant.client_id} (${member.user.email})`,
      user_id: member.user.id,
    },
  };
}

async function fromMachineToken(s: Authenticator, token: string): Promise<MachinePrincipal> {
  const claims = await s.jwt.verifyMachineToken(token);
  // The record's key comes from the verified claims: a token can only name its own team and gateway.
  const { token: record, gateway } = await s.store.tokens.machineTokenWithGateway<GatewayRecord>(
    claims.team_id,
    claims.sub,
    claims.jti,
  );
  if (!record) throw new TokenError("unknown machine token");
  if (record.revoked_at) throw new TokenError("machine token revoked");
  if (Date.parse(record.expires_at) <= s.options.clock.now()) {
    throw new TokenError("machine token expired");
  }
  if (!gateway) throw new TokenError("the gateway of this token was deleted");
  s.store.tokens.touchMachineToken(record).catch(() => {});
  return {
    kind: "machine",
    teamId: record.team_id,
    gatewayId: gateway.id,
    gatewayCode: gateway.code,
    abilities: claims.abilities,
    token: record,
    actor: { type: "machine", id: gateway.id, label: gateway.code },
  };
}

async function memberOf(
  s: Authenticator,
  userId: string,
  teamId: string,
): Promise<{ user: User; team: Team; role: Role }> {
  const [user, team, membership] = await Promise.all([
    s.store.identity.user(userId),
    s.store.identity.team(teamId),
    s.store.identity.membership(teamId, userId),
  ]);
  if (!user || !team || !membership) {
    throw new TokenError("the user is no longer a member of the token's team");
  }
  return { user, team, role: membership.role };
}
