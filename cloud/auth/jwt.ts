/**
 * User tokens and machine tokens: RS256 JWTs signed with the key ring's active key (`kid` in the
 * header), issuer = the service's base URL. User tokens carry `user` and `team` claims; machine
 * tokens carry the gateway. Verification pins the issuer, the audience and the algorithm.
 */
import { decodeProtectedHeader, errors, type JWTPayload, jwtVerify, SignJWT } from "jose";
import type { Clock } from "../clock.ts";
import {
  MACHINE_TOKEN_AUDIENCE,
  type MachineAbility,
  USER_TOKEN_AUDIENCE,
} from "../../shared/mod.ts";
import type { KeyRing } from "./keys.ts";

/** Claims of a user token beyond the registered ones. */
export interface UserTokenClaims extends JWTPayload {
  sub: string;
  jti: string;
  token_use: "user";
  user: { id: string; email: string; name: string };
  team: { id: string; name: string };
}

/** Claims of a machine token beyond the registered ones. */
export interface MachineTokenJwtClaims extends JWTPayload {
  sub: string;
  jti: string;
  token_use: "machine";
  team_id: string;
  gateway_code: string;
  abilities: MachineAbility[];
}

/**
 * Claims of an MCP access token (the MCP authorization flow): audience-bound to the resource
 * (RFC 8707), tied to the grant that the tokens page can revoke.
 */
export interface McpAccessClaims extends JWTPayload {
  sub: string;
  jti: string;
  token_use: "mcp";
  team_id: string;
  grant_id: string;
  client_id: string;
  scope: string;
}

/** Most verified tokens remembered (oldest forgotten first). */
const VERIFIED_CACHE_LIMIT = 10_000;

/** Why a token was refused (never shown in detail to the caller beyond this). */
export class TokenError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "TokenError";
  }
}

/** Signs and verifies the service's JWTs. */
export class Tokens {
  #keys: KeyRing;
  #clock: Clock;
  #issuer: string;
  /**
   * Tokens whose signature was verified, by audience and text. A signature stays valid for the
   * token's life, so only the time claims are checked again (RSA verification costs ~0.3 ms).
   */
  #verified = new Map<string, JWTPayload>();

  constructor(keys: KeyRing, clock: Clock, issuer: string) {
    this.#keys = keys;
    this.#clock = clock;
    this.#issuer = issuer;
  }

  /** The issuer (`iss`) of every token: the public base URL. */
  get issuer(): string {
    return this.#issuer;
  }

  /** A user token for `user` acting in `team`, valid `ttlSeconds`. */
  async issueUserToken(
    user: { id: string; email: string; name: string },
    team: { id: string; name: string },
    ttlSeconds: number,
  ): Promise<{ token: string; expiresAt: number; jti: string }> {
    const now = Math.floor(this.#clock.now() / 1000);
    const jti = crypto.randomUUID();
    const { kid, key } = await this.#keys.signingKey();
    const token = await new SignJWT({
      token_use: "user",
      user: { id: user.id, email: user.email, name: user.name },
      team: { id: team.id, name: team.name },
    })
      .setProtectedHeader({ alg: "RS256", kid, typ: "JWT" })
      .setIssuer(this.#issuer)
      .setAudience(USER_TOKEN_AUDIENCE)
      .setSubject(user.id)
      .setJti(jti)
      .setIssuedAt(now)
      .setNotBefore(now - 5)
      .setExpirationTime(now + ttlSeconds)
      .sign(key);
    return { token, expiresAt: (now + ttlSeconds) * 1000, jti };
  }

  /** A machine token for a gateway, expiring at `expiresAt` (ms). */
  async issueMachineToken(input: {
    jti: string;
    gatewayId: string;
    gatewayCode: string;
    teamId: string;
    abilities: MachineAbility[];
    expiresAt: number;
  }): Promise<string> {
    const now = Math.floor(this.#clock.now() / 1000);
    const { kid, key } = await this.#keys.signingKey();
    return await new SignJWT({
      token_use: "machine",
      team_id: input.teamId,
      gateway_code: input.gatewayCode,
      abilities: input.abilities,
    })
      .setProtectedHeader({ alg: "RS256", kid, typ: "JWT" })
      .setIssuer(this.#issuer)
      .setAudience(MACHINE_TOKEN_AUDIENCE)
      .setSubject(input.gatewayId)
      .setJti(input.jti)
      .setIssuedAt(now)
      .setExpirationTime(Math.floor(input.expiresAt / 1000))
      .sign(key);
  }

  /** An MCP access token for `resource` (its audience), valid `ttlSeconds`. */
  async issueMcpAccessToken(input: {
    userId: string;
    teamId: string;
    grantId: string;
    clientId: string;
    resource: string;
    scope: string;
    ttlSeconds: number;
  }): Promise<string> {
    const now = Math.floor(this.#clock.now() / 1000);
    const { kid, key } = await this.#keys.signingKey();
    return await new SignJWT({
      token_use: "mcp",
      team_id: input.teamId,
      grant_id: input.grantId,
      client_id: input.clientId,
      scope: input.scope,
    })
      // RFC 9068's media type, so that no verifier takes it for an ID or user token.
      .setProtectedHeader({ alg: "RS256", kid, typ: "at+jwt" })
      .setIssuer(this.#issuer)
      .setAudience(input.resource)
      .setSubject(input.userId)
      .setJti(crypto.randomUUID())
      .setIssuedAt(now)
      .setNotBefore(now - 5)
      .setExpirationTime(now + input.ttlSeconds)
      .sign(key);
  }

  /** Verifies an MCP access token for `resource`; throws TokenError. */
  async verifyMcpAccessToken(token: string, resource: string): Promise<McpAccessClaims> {
    const claims = await this.#verify(token, resource, "at+jwt");
    if (
      claims.token_use !== "mcp" || typeof claims.sub !== "string" ||
      typeof claims.team_id !== "string" || typeof claims.grant_id !== "string" ||
      typeof claims.client_id !== "string"
    ) {
      throw new TokenError("not an MCP access token");
    }
    return claims as McpAccessClaims;
  }

  /** Verifies a user token; throws TokenError. */
  async verifyUserToken(token: string): Promise<UserTokenClaims> {
    const claims = await this.#verify(token, USER_TOKEN_AUDIENCE);
    if (
      claims.token_use !== "user" || typeof claims.sub !== "string" ||
      typeof claims.jti !== "string" || typeof (claims.team as { id?: unknown })?.id !== "string"
    ) {
      throw new TokenError("not a user token");
    }
    return claims as UserTokenClaims;
  }

  /** Verifies a machine token's signature, issuer, audience and expiry; throws TokenError. */
  async verifyMachineToken(token: string): Promise<MachineTokenJwtClaims> {
    const claims = await this.#verify(token, MACHINE_TOKEN_AUDIENCE);
    if (
      claims.token_use !== "machine" || typeof claims.sub !== "string" ||
      typeof claims.jti !== "string" || typeof claims.team_id !== "string"
    ) {
      throw new TokenError("not a machine token");
    }
    return claims as MachineTokenJwtClaims;
  }

  async #verify(token: string, audience: string, typ?: string): Promise<JWTPayload> {
    const cacheKey = `${audience} ${token}`;
    const cached = this.#verified.get(cacheKey);
    if (cached) {
      const now = this.#clock.now() / 1000;
      if (typeof cached.exp === "number" && cached.exp <= now) {
        this.#verified.delete(cacheKey);
        throw new TokenError("token expired");
      }
      if (typeof cached.nbf === "number" && cached.nbf > now) {
        throw new TokenError("token not yet valid");
      }
      return cached;
    }
    let kid: string | undefined;
    try {
      kid = decodeProtectedHeader(token).kid;
    } catch {
      throw new TokenError("malformed token");
    }
    if (!kid) throw new TokenError("token has no kid");
    const key = await this.#keys.verificationKey(kid);
    if (!key) throw new TokenError("token signed with an unknown or retired key");
    try {
      const { payload } = await jwtVerify(token, key, {
        issuer: this.#issuer,
        audience,
        algorithms: ["RS256"],
        typ,
        currentDate: new Date(this.#clock.now()),
      });
      if (this.#verified.size >= VERIFIED_CACHE_LIMIT) {
        this.#verified.delete(this.#verified.keys().next().value!);
      }
      this.#verified.set(cacheKey, payload);
      return payload;
    } catch (err) {
      if (err instanceof errors.JWTExpired) throw new TokenError("token expired");
      if (err instanceof errors.JOSEError) throw new TokenError(`invalid token: ${err.code}`);
      throw err;
    }
  }
}
