/** Test helpers of the cloud integration: machine-token payloads with well-formed JWTs. */
import type { MachineTokenPayload } from "../../shared/mod.ts";

function b64url(value: unknown): string {
  return btoa(JSON.stringify(value)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/**
 * A payload whose JWT claims agree with its fields (not signed by anyone: for checks that do not
 * verify signatures). `iat` defaults to now, expiry to 30 days later.
 */
export function testPayload(opts: {
  issuer?: string;
  code?: string;
  iatMs?: number;
  lifeMs?: number;
} = {}): MachineTokenPayload {
  const iat = Math.floor((opts.iatMs ?? Date.now()) / 1000);
  const exp = iat + Math.floor((opts.lifeMs ?? 30 * 86_400_000) / 1000);
  const gatewayId = "0190f5e1-2b3c-7d4e-8f5a-6b7c8d9e0f1a";
  const code = opts.code ?? "edge-1";
  const claims = {
    iss: opts.issuer ?? "https://cloud.example.com",
    aud: "gateway-machine",
    sub: gatewayId,
    iat,
    exp,
    jti: "j1",
    token_use: "machine",
    gateway_code: code,
  };
  return {
    machine_token: `${b64url({ alg: "RS256", kid: "k" })}.${b64url(claims)}.c2ln`,
    expires_at: new Date(exp * 1000).toISOString(),
    gateway_id: gatewayId,
    gateway_code: code,
    abilities: ["config:read"],
  };
}
