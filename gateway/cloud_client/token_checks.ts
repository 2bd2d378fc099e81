/**
 * Checks of a machine-token payload before the gateway holds it: locally its shape and expiry
 * (shared/tokens.ts), that the JWT names the configured cloud as issuer, and that it is for the
 * configured gateway code; then with the cloud: the signature against the published keys (JWKS)
 * and `GET /api/gateway/self` (which also refuses a revoked token).
 */
import {
  checkMachineTokenPayload,
  decodeTokenClaims,
  type MachineTokenPayload,
} from "../../shared/mod.ts";
import { type CloudClient, CloudHttpError } from "./client.ts";
import { pinMismatch } from "./pin.ts";
import { TokenRejectedError, type TokenVerifier } from "./jwt.ts";
import type { CloudSettings } from "./settings.ts";

/**
 * The outcome of the local checks: the payload, or every problem (each names its field).
 * `foreign` marks a well-formed token of another cloud service (its issuer is not `[cloud] url`).
 */
export type LocalCheck =
  | { ok: true; payload: MachineTokenPayload }
  | { ok: false; problems: string[]; foreign?: boolean; pinned?: boolean };

/** Shape, expiry, issuer and gateway code, without a network call. */
export function checkPayloadLocally(
  value: unknown,
  settings: CloudSettings,
  now: number,
): LocalCheck {
  const check = checkMachineTokenPayload(value, now);
  if (!check.ok) return check;
  const p = check.payload;
  if (settings.codeConfigured && p.gateway_code !== settings.gatewayCode) {
    return {
      ok: false,
      problems: [
        `gateway_code: the token is for gateway \`${p.gateway_code}\`, this gateway is ` +
        `\`${settings.gatewayCode}\` ([cloud] gateway_code)`,
      ],
    };
  }
  const iss = decodeTokenClaims(p.machine_token)?.iss;
  if (settings.url !== null && iss !== settings.url) {
    return {
      ok: false,
      foreign: true,
      problems: [
        `machine_token: issued by ${JSON.stringify(iss ?? null)}, not by the configured cloud ` +
        `service ${settings.url} ([cloud] url). The two must be the same URL, spelled the same ` +
        `way (localhost and 127.0.0.1 differ): if ${JSON.stringify(iss ?? null)} is your cloud ` +
        "service, set [cloud] url to it and reload; else get a token from " + `${settings.url}`,
      ],
    };
  }
  // Codes are unique only within a team: the pinned team, gateway id and issuer decide.
  const mismatch = settings.pin && pinMismatch(settings.pin, p);
  if (mismatch) return { ok: false, pinned: true, problems: [mismatch] };
  return check;
}

/**
 * Verifies the token with the cloud: signature and claims against the JWKS, then
 * `GET /api/gateway/self`. Throws TokenRejectedError when the cloud refuses it; a cloud that
 * cannot be reached or fails throws the client's errors.
 */
export async function verifyWithCloud(
  payload: MachineTokenPayload,
  verifier: TokenVerifier,
  client: CloudClient,
): Promise<void> {
  const claims = await verifier.machineToken(payload.machine_token);
  if (claims.sub !== payload.gateway_id) {
    throw new TokenRejectedError("machine_token: its subject is not gateway_id");
  }
  let self;
  try {
    self = await client.self(payload.machine_token);
  } catch (err) {
    if (err instanceof CloudHttpError && err.status === 401) {
      throw new TokenRejectedError(`the cloud service refused it: ${err.message}`);
    }
    throw err;
  }
  if (self.gateway_id !== payload.gateway_id) {
    throw new TokenRejectedError("the cloud service reports another gateway for this token");
  }
}
