/**
 * What `GATEWAY_MACHINE_TOKEN` may hold: the machine-token payload as JSON (SPEC, Authentication
 * 4: what `POST /api/gateway/authorize` and `gwcli token:get` answer), or the machine token alone
 * (`gwcli token:get --raw`). A bare token is turned into its payload from its own claims (`exp`,
 * `sub` the gateway id, `gateway_code`, `abilities`), which the cloud's machine tokens carry; the
 * usual checks (shape, expiry, issuer, pin, then the signature with the cloud) follow either way.
 */
import { decodeTokenClaims, type MachineTokenPayload } from "../../shared/mod.ts";

/** What the variable should hold, for messages (never the value itself: it is a credential). */
export const EXPECTED_ENV_TOKEN = "expected the JSON payload that POST /api/gateway/authorize " +
  'answers (`gwcli token:get -g CODE`): {"machine_token": "<JWT>", "expires_at": "<ISO 8601>", ' +
  '"gateway_id": "<UUID>", "gateway_code": "<code>"}, or the machine token alone ' +
  "(`gwcli token:get -g CODE --raw`)";

/** The value to check as a payload (parsed JSON, or built from a bare token), or why not. */
export type EnvTokenValue = { ok: true; value: unknown } | { ok: false; problems: string[] };

const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/** Reads the text of `GATEWAY_MACHINE_TOKEN`. */
export function readEnvToken(text: string): EnvTokenValue {
  const trimmed = text.trim();
  if (COMPACT_JWS.test(trimmed)) return fromBareToken(trimmed);
  let value: unknown;
  try {
    value = JSON.parse(trimmed);
  } catch {
    // V8's message quotes the start of the text: a credential stays out of the log.
    const why = trimmed.startsWith("{") ? "not valid JSON" : "neither JSON nor a JWT";
    return { ok: false, problems: [`${why}: ${EXPECTED_ENV_TOKEN}`] };
  }
  // A token in JSON quotes (`"eyJ…"`) is the token.
  if (typeof value === "string" && COMPACT_JWS.test(value)) return fromBareToken(value);
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { ok: false, problems: [`not a JSON object: ${EXPECTED_ENV_TOKEN}`] };
  }
  return { ok: true, value };
}

/** The payload of a bare machine token, from its claims. */
function fromBareToken(token: string): EnvTokenValue {
  const claims = decodeTokenClaims(token);
  if (!claims) {
    return {
      ok: false,
      problems: [`a JWT whose claims cannot be decoded: ${EXPECTED_ENV_TOKEN}`],
    };
  }
  const missing = [
    typeof claims.exp === "number" ? "" : "exp",
    typeof claims.sub === "string" ? "" : "sub (the gateway id)",
    typeof claims.gateway_code === "string" ? "" : "gateway_code",
  ].filter(Boolean);
  if (missing.length) {
    return {
      ok: false,
      problems: [
        `a JWT without ${missing.join(", ")} in its claims, so not a machine token of the ` +
        `cloud service: ${EXPECTED_ENV_TOKEN}`,
      ],
    };
  }
  const payload: MachineTokenPayload = {
    machine_token: token,
    expires_at: new Date(claims.exp! * 1000).toISOString(),
    gateway_id: claims.sub!,
    gateway_code: claims.gateway_code!,
  };
  const abilities = claims.abilities;
  if (Array.isArray(abilities) && abilities.every((a) => typeof a === "string")) {
    payload.abilities = [...abilities];
  }
  return { ok: true, value: payload };
}
