/**
 * Verifying tokens against the configured cloud service: machine tokens and user tokens are RS256
 * JWTs checked with the keys the service publishes at `/.well-known/jwks.json`, with the issuer
 * pinned to `[cloud] url`. User tokens may instead be HS256 JWTs signed with the shared secret
 * `GATEWAY_JWT_SECRET` (SPEC, Authentication 6). A refusal is a {@link TokenRejectedError}; a cloud
 * that cannot be reached surfaces as the client's own errors.
 */
import {
  createLocalJWKSet,
  decodeProtectedHeader,
  errors,
  type JSONWebKeySet,
  type JWTPayload,
  jwtVerify,
  type JWTVerifyGetKey,
} from "jose";
import { MACHINE_TOKEN_AUDIENCE, USER_TOKEN_AUDIENCE } from "../../shared/mod.ts";
import type { CloudClient } from "./client.ts";
import type { Clock } from "./clock.ts";

/** Keys are fetched again after this long. */
const JWKS_MAX_AGE_MS = 10 * 60_000;
/** A token naming an unknown key refetches the set at most this often (key rotation). */
const JWKS_COOLDOWN_MS = 30_000;

/** Name of the shared-secret variable. */
export const JWT_SECRET_ENV = "GATEWAY_JWT_SECRET";

/** A token was refused; the reason is safe to show (it never contains the token). */
export class TokenRejectedError extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = "TokenRejectedError";
  }
}

/** The published keys of one cloud service, cached. */
export class CloudKeys {
  readonly #client: CloudClient;
  #keys: ReturnType<typeof createLocalJWKSet> | undefined;
  #fetchedAt = 0;

  constructor(client: CloudClient) {
    this.#client = client;
  }

  /** The key resolver for jose; refetches when stale, or once per cooldown for an unknown kid. */
  async resolver(): Promise<JWTVerifyGetKey> {
    if (!this.#keys || Date.now() - this.#fetchedAt > JWKS_MAX_AGE_MS) await this.#refresh();
    const keys = this.#keys!;
    return async (header, token) => {
      try {
        return await keys(header, token);
      } catch (err) {
        if (!(err instanceof errors.JWKSNoMatchingKey)) throw err;
        if (Date.now() - this.#fetchedAt < JWKS_COOLDOWN_MS) throw err;
        await this.#refresh();
        return await this.#keys!(header, token);
      }
    };
  }

  async #refresh(): Promise<void> {
    const set = await this.#client.jwks();
    if (typeof set !== "object" || set === null || !Array.isArray((set as JSONWebKeySet).keys)) {
      throw new TokenRejectedError("the cloud service's JWKS is not a key set");
    }
    this.#keys = createLocalJWKSet(set as JSONWebKeySet);
    this.#fetchedAt = Date.now();
  }
}

/** Verifies tokens for one cloud service (`issuer` = its normalized base URL). */
export class TokenVerifier {
  readonly issuer: string;
  readonly #keys: CloudKeys;
  readonly #clock: Pick<Clock, "now">;

  constructor(client: CloudClient, issuer: string, clock: Pick<Clock, "now">) {
    this.issuer = issuer;
    this.#keys = new CloudKeys(client);
    this.#clock = clock;
  }

  /** Checks a machine token's signature, issuer, audience and expiry; answers its claims. */
  async machineToken(token: string): Promise<JWTPayload> {
    const payload = await this.#rs256(token, MACHINE_TOKEN_AUDIENCE, "machine token");
    if (payload.token_use !== "machine") {
      throw new TokenRejectedError("machine_token: it is not a machine token");
    }
    return payload;
  }

  /**
   * Checks a user token: RS256 with the cloud's keys, or HS256 with `jwtSecret` when given.
   * Both must name the cloud as issuer and `gateway-cloud-api` as audience, and not be expired.
   */
  async userToken(token: string, jwtSecret: string | undefined): Promise<JWTPayload> {
    let alg: string | undefined;
    try {
      alg = decodeProtectedHeader(token).alg;
    } catch {
      throw new TokenRejectedError("the user token is not a JWT");
    }
    let payload: JWTPayload;
    if (alg === "RS256") {
      payload = await this.#rs256(token, USER_TOKEN_AUDIENCE, "user token");
    } else if (alg === "HS256") {
      if (!jwtSecret) {
        throw new TokenRejectedError(
          `the user token is signed with HS256, which needs ${JWT_SECRET_ENV} on the gateway; ` +
            "log in again with `gwcli login` for an RS256 token",
        );
      }
      payload = await this.#verify(
        token,
        new TextEncoder().encode(jwtSecret),
        "HS256",
        USER_TOKEN_AUDIENCE,
        "user token",
      );
    } else {
      throw new TokenRejectedError(`the user token's algorithm ${alg ?? "(none)"} is not accepted`);
    }
    if (payload.token_use !== undefined && payload.token_use !== "user") {
      throw new TokenRejectedError(
        `the token is a ${String(payload.token_use)} token, not a user token`,
      );
    }
    return payload;
  }

  async #rs256(token: string, audience: string, what: string): Promise<JWTPayload> {
    return await this.#verify(token, await this.#keys.resolver(), "RS256", audience, what);
  }

  async #verify(
    token: string,
    key: JWTVerifyGetKey | Uint8Array,
    alg: string,
    audience: string,
    what: string,
  ): Promise<JWTPayload> {
    try {
      const options = {
        issuer: this.issuer,
        audience,
        algorithms: [alg],
        requiredClaims: ["exp"],
        currentDate: new Date(this.#clock.now()),
      };
      const { payload } = key instanceof Uint8Array
        ? await jwtVerify(token, key, options)
        : await jwtVerify(token, key, options);
      return payload;
    } catch (err) {
      throw new TokenRejectedError(`${what}: ${reason(err, this.issuer)}`);
    }
  }
}

function reason(err: unknown, issuer: string): string {
  if (err instanceof errors.JWTExpired) return "expired";
  if (err instanceof errors.JWTClaimValidationFailed) {
    if (err.claim === "iss") return `not issued by the configured cloud service ${issuer}`;
    if (err.claim === "aud") return "issued for another audience";
    return `claim ${err.claim} is invalid (${err.reason})`;
  }
  if (err instanceof errors.JWSSignatureVerificationFailed) return "the signature does not verify";
  if (err instanceof errors.JWKSNoMatchingKey) {
    return "signed with a key the cloud service does not publish";
  }
  if (err instanceof errors.JOSEAlgNotAllowed) {
    return "signed with an algorithm that is not allowed";
  }
  if (err instanceof errors.JWSInvalid || err instanceof errors.JWTInvalid) return "malformed JWT";
  if (err instanceof TokenRejectedError) return err.message;
  throw err;
}
