/**
 * Verifying the user token: an RS256 JWT signed by a key of the cloud's JWKS, issuer pinned to
 * the configured `api-url`, audience `gateway-cloud-api`, not expired.
 */
import { createLocalJWKSet, errors as joseErrors, type JWTPayload, jwtVerify } from "jose";
import { USER_TOKEN_AUDIENCE } from "../shared/mod.ts";
import { authError, CliError } from "./errors.ts";
import { apiErrorOf, describeApiError, type HttpClient } from "./http.ts";
import { type CloudMetadata, fetchMetadata } from "./discovery.ts";

/** The claims of a verified user token. */
export interface VerifiedUserToken {
  issuer: string;
  subject: string;
  audience: string[];
  user?: { id?: string; email?: string; name?: string };
  team?: { id?: string; name?: string };
  issuedAt?: Date;
  expiresAt: Date;
}

/** Fetches the JWK set named by the metadata. */
async function fetchJwks(http: HttpClient, metadata: CloudMetadata) {
  const res = await http.send({ method: "GET", url: metadata.jwks_uri, peer: "the cloud service" });
  if (res.status !== 200 || !Array.isArray((res.body as { keys?: unknown })?.keys)) {
    throw new CliError(
      `cannot read the signing keys at ${metadata.jwks_uri} (${res.status}): ` +
        describeApiError(apiErrorOf(res)),
    );
  }
  return createLocalJWKSet(res.body as { keys: [] });
}

/** Why a token failed verification, in words. */
export function describeVerifyError(err: unknown): string {
  if (err instanceof joseErrors.JWTExpired) {
    const exp = (err.payload as JWTPayload).exp;
    return `the token expired${exp ? ` at ${new Date(exp * 1000).toISOString()}` : ""}`;
  }
  if (err instanceof joseErrors.JWTClaimValidationFailed) {
    return `the token's ${err.claim} claim is not accepted (${err.reason})`;
  }
  if (err instanceof joseErrors.JWKSNoMatchingKey) {
    return "the token was signed by a key that the cloud service does not publish";
  }
  if (err instanceof joseErrors.JWSSignatureVerificationFailed) {
    return "the token's signature does not verify";
  }
  if (err instanceof joseErrors.JOSEAlgNotAllowed) return "the token is not signed with RS256";
  if (err instanceof joseErrors.JWTInvalid || err instanceof joseErrors.JWSInvalid) {
    return "the stored value is not a valid JWT";
  }
  return (err as Error).message ?? String(err);
}

/** Verifies `token` against the cloud at `apiUrl`; an invalid token is an auth error (exit 3). */
export async function verifyUserToken(
  http: HttpClient,
  apiUrl: string,
  token: string,
  now: Date = new Date(),
): Promise<VerifiedUserToken> {
  const metadata = await fetchMetadata(http, apiUrl);
  const jwks = await fetchJwks(http, metadata);
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(token, jwks, {
      issuer: metadata.issuer,
      audience: USER_TOKEN_AUDIENCE,
      algorithms: ["RS256"],
      currentDate: now,
      requiredClaims: ["exp", "sub"],
    }));
  } catch (err) {
    throw authError(`the stored token is not valid: ${describeVerifyError(err)}`);
  }
  const claims = payload as JWTPayload & {
    user?: VerifiedUserToken["user"];
    team?: VerifiedUserToken["team"];
  };
  return {
    issuer: claims.iss!,
    subject: claims.sub!,
    audience: claims.aud === undefined ? [] : Array.isArray(claims.aud) ? claims.aud : [claims.aud],
    user: typeof claims.user === "object" ? claims.user : undefined,
    team: typeof claims.team === "object" ? claims.team : undefined,
    issuedAt: claims.iat ? new Date(claims.iat * 1000) : undefined,
    expiresAt: new Date(claims.exp! * 1000),
  };
}

/** `Ada <ada@example.com>` (or whatever part the token has). */
export function describeUser(t: VerifiedUserToken): string {
  const u = t.user;
  if (!u) return t.subject;
  if (u.name && u.email) return `${u.name} <${u.email}>`;
  return u.email ?? u.name ?? u.id ?? t.subject;
}

/** `Radiology` (or the id). */
export function describeTeam(t: VerifiedUserToken): string | undefined {
  return t.team?.name ?? t.team?.id;
}
