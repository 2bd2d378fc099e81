/**
 * The machine-token payload (SPEC "Machine token payload") and its checks, shared by the cloud
 * service (which issues it), the gateway (which reads it from `GATEWAY_MACHINE_TOKEN` or the
 * management API) and gwcli (which prints it).
 *
 * A machine token is an RS256 JWT issued by the cloud service: `iss` is the cloud base URL,
 * `aud` is {@link MACHINE_TOKEN_AUDIENCE}, `sub` is the gateway id, `jti` identifies it for
 * revocation, and `gateway_code`, `team_id` and `abilities` are claims of their own.
 */
import { Buffer } from "node:buffer";

/** The JSON object the cloud answers `POST /api/gateway/authorize` with. */
export interface MachineTokenPayload {
  /** The token itself (a compact JWS). */
  machine_token: string;
  /** Expiry, ISO 8601 (UTC). */
  expires_at: string;
  /** Gateway id (UUID) in the cloud service. */
  gateway_id: string;
  /** Gateway code (the instance id chosen by the operator). */
  gateway_code: string;
  /** What the token allows; see {@link MACHINE_ABILITIES}. */
  abilities?: string[];
}

/** Lifetime of a machine token: 30 days (SPEC, Limits). */
export const MACHINE_TOKEN_LIFETIME_MS = 30 * 24 * 60 * 60 * 1000;

/** `aud` of machine tokens. */
export const MACHINE_TOKEN_AUDIENCE = "gateway-machine";

/** `aud` of user tokens (device login, gwcli). */
export const USER_TOKEN_AUDIENCE = "gateway-cloud-api";

/** Abilities a machine token carries. */
export const MACHINE_ABILITIES = [
  "config:read",
  "config:report",
  "config:upload",
  "status:write",
  "transforms:read",
  "token:renew",
] as const;

/** One machine-token ability. */
export type MachineAbility = typeof MACHINE_ABILITIES[number];

/** Gateway codes: 1-64 characters, letters, digits, `.`, `_`, `-`, starting with a letter or digit. */
export const GATEWAY_CODE_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/** The outcome of checking a payload: the payload, or every problem found. */
export type PayloadCheck =
  | { ok: true; payload: MachineTokenPayload }
  | { ok: false; problems: string[] };

/** Checks the shape of `value` (an object or its JSON text) and that it has not expired at `now`. */
export function checkMachineTokenPayload(value: unknown, now: number = Date.now()): PayloadCheck {
  let raw = value;
  if (typeof value === "string") {
    try {
      raw = JSON.parse(value);
    } catch {
      return { ok: false, problems: ["not valid JSON"] };
    }
  }
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    return { ok: false, problems: ["must be a JSON object"] };
  }
  const o = raw as Record<string, unknown>;
  const problems: string[] = [];
  if (typeof o.machine_token !== "string" || !COMPACT_JWS.test(o.machine_token)) {
    problems.push("machine_token: must be a compact JWT (three base64url parts)");
  }
  if (typeof o.expires_at !== "string" || !ISO_TIMESTAMP.test(o.expires_at)) {
    problems.push("expires_at: must be an ISO 8601 timestamp");
  } else if (Date.parse(o.expires_at) <= now) {
    problems.push(`expires_at: the token expired at ${o.expires_at}`);
  }
  if (typeof o.gateway_id !== "string" || !UUID.test(o.gateway_id)) {
    problems.push("gateway_id: must be a UUID");
  }
  if (typeof o.gateway_code !== "string" || !GATEWAY_CODE_PATTERN.test(o.gateway_code)) {
    problems.push("gateway_code: must be 1-64 letters, digits, '.', '_' or '-'");
  }
  if (
    o.abilities !== undefined &&
    (!Array.isArray(o.abilities) || o.abilities.some((a) => typeof a !== "string"))
  ) {
    problems.push("abilities: must be an array of strings");
  }
  if (problems.length === 0 && typeof o.machine_token === "string") {
    problems.push(...crossCheck(o as unknown as MachineTokenPayload));
  }
  if (problems.length) return { ok: false, problems };
  const payload: MachineTokenPayload = {
    machine_token: o.machine_token as string,
    expires_at: o.expires_at as string,
    gateway_id: o.gateway_id as string,
    gateway_code: o.gateway_code as string,
  };
  if (o.abilities !== undefined) payload.abilities = [...(o.abilities as string[])];
  return { ok: true, payload };
}

/** Claims of a machine token, read without verifying the signature (verification needs JWKS). */
export interface MachineTokenClaims {
  iss?: string;
  sub?: string;
  aud?: string | string[];
  exp?: number;
  iat?: number;
  jti?: string;
  gateway_code?: string;
  team_id?: string;
  abilities?: string[];
}

/** Decodes the claims of a compact JWT without verifying it; undefined when malformed. */
export function decodeTokenClaims(token: string): MachineTokenClaims | undefined {
  const parts = token.split(".");
  if (parts.length !== 3) return undefined;
  // Base64url (RFC 7515 2: without padding, which is tolerated); decoded natively (node:buffer).
  if (!/^[A-Za-z0-9_-]*={0,2}$/.test(parts[1])) return undefined;
  try {
    const claims = JSON.parse(Buffer.from(parts[1], "base64url").toString("utf8"));
    return typeof claims === "object" && claims !== null && !Array.isArray(claims)
      ? claims
      : undefined;
  } catch {
    return undefined;
  }
}

/** Problems where the token's own claims disagree with the payload fields around it. */
function crossCheck(p: MachineTokenPayload): string[] {
  const claims = decodeTokenClaims(p.machine_token);
  if (!claims) return ["machine_token: the JWT claims cannot be decoded"];
  const problems: string[] = [];
  const aud = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
  if (!aud.includes(MACHINE_TOKEN_AUDIENCE)) {
    problems.push(`machine_token: audience is not ${MACHINE_TOKEN_AUDIENCE}`);
  }
  if (claims.sub !== p.gateway_id) problems.push("machine_token: sub is not gateway_id");
  if (claims.gateway_code !== p.gateway_code) {
    problems.push("machine_token: gateway_code claim differs from gateway_code");
  }
  if (
    typeof claims.exp !== "number" || Math.abs(claims.exp * 1000 - Date.parse(p.expires_at)) > 1000
  ) {
    problems.push("machine_token: exp claim differs from expires_at");
  }
  return problems;
}
