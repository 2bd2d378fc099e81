/**
 * The OAuth endpoints of the device flow (RFC 8628). Their errors follow RFC 6749 §5.2
 * (`{"error":"authorization_pending","error_description":…}`), which OAuth clients expect, rather
 * than the `{"error":{…}}` shape of the rest of the API.
 */
import type { Context } from "hono";
import {
  DEVICE_CLIENTS,
  DEVICE_GRANT_TYPE,
  pollDeviceToken,
  startDeviceAuthorization,
} from "../auth/mod.ts";
import type { Services } from "../services.ts";
import { readBytes } from "./body.ts";
import type { AppEnv } from "./env.ts";
import { ApiError } from "./errors.ts";
import { clientIp } from "./middleware.ts";
import type { Registry } from "./registry.ts";

const MAX_BODY = 4096;

/** An OAuth error answer. */
function oauthError(
  c: Context<AppEnv>,
  status: 400 | 401 | 413 | 415 | 429,
  error: string,
  description: string,
) {
  c.header("Cache-Control", "no-store");
  return c.json({ error, error_description: description }, status);
}

/** Reads form (or JSON) parameters of an OAuth request. */
async function params(c: Context<AppEnv>): Promise<Record<string, string> | Response> {
  const type = c.req.header("content-type") ?? "";
  let bytes: Uint8Array;
  try {
    bytes = await readBytes(c, MAX_BODY);
  } catch (err) {
    if (err instanceof ApiError) return oauthError(c, 413, "invalid_request", err.message);
    throw err;
  }
  const text = new TextDecoder().decode(bytes);
  if (/^application\/x-www-form-urlencoded\b/i.test(type)) {
    return Object.fromEntries(new URLSearchParams(text));
  }
  if (/^application\/json\b/i.test(type)) {
    try {
      const o = JSON.parse(text);
      if (typeof o === "object" && o !== null && !Array.isArray(o)) {
        return Object.fromEntries(
          Object.entries(o).filter(([, v]) => typeof v === "string"),
        ) as Record<string, string>;
      }
    } catch {
      // fall through
    }
    return oauthError(c, 400, "invalid_request", "the body is not a JSON object");
  }
  return oauthError(c, 415, "invalid_request", "send application/x-www-form-urlencoded parameters");
}

function limited(
  c: Context<AppEnv>,
  key: string,
  budget: Services["options"]["rateLimits"]["perToken"],
) {
  const d = c.get("services").limiter.take(key, budget);
  if (d.allowed) return null;
  c.header("Retry-After", String(d.retryAfterSeconds));
  return oauthError(
    c,
    429,
    "rate_limited",
    `too many requests: retry after ${d.retryAfterSeconds} s`,
  );
}

/** Mounts `/oauth/device/code` and `/oauth/token`. */
export function mountOAuth(reg: Registry, s: Services): void {
  reg.add({
    method: "post",
    path: "/oauth/device/code",
    tag: "Device login",
    summary: "Start a device login (RFC 8628 device authorization request)",
    description:
      "The device shows `user_code` and `verification_uri`; a signed-in user approves it in the browser while the device polls the token endpoint every `interval` seconds.",
    auth: ["none"],
    body: {
      contentType: "application/x-www-form-urlencoded",
      example: "client_id=gwcli",
      description: "`client_id` (required, `gwcli`), `scope` (optional, informative).",
    },
    responses: {
      200: {
        description: "Device and user codes",
        example: {
          device_code: "GmRhmhcxhwAzkoEqiMEg_DnyEysNkuNhszIySk9eS",
          user_code: "WDJB-MJHT",
          verification_uri: "https://cloud.example.com/device",
          verification_uri_complete: "https://cloud.example.com/device?user_code=WDJB-MJHT",
          expires_in: 600,
          interval: 5,
        },
      },
      400: {
        description: "Missing client_id",
        example: { error: "invalid_request", error_description: "client_id is required" },
      },
      401: {
        description: "Unknown client",
        example: { error: "invalid_client", error_description: "unknown client_id" },
      },
      429: {
        description: "Too many requests from this address (Retry-After)",
        example: {
          error: "rate_limited",
          error_description: "too many requests: retry after 12 s",
        },
      },
    },
  }, async (c) => {
    const tooMany = limited(c, `device-code:${clientIp(c)}`, s.options.rateLimits.deviceCodePerIp);
    if (tooMany) return tooMany;
    const p = await params(c);
    if (p instanceof Response) return p;
    if (!p.client_id) return oauthError(c, 400, "invalid_request", "client_id is required");
    if (!Object.hasOwn(DEVICE_CLIENTS, p.client_id)) {
      return oauthError(c, 401, "invalid_client", "unknown client_id");
    }
    const auth = await startDeviceAuthorization(s, p.client_id, p.scope?.slice(0, 200) ?? null);
    c.header("Cache-Control", "no-store");
    return c.json(auth);
  });

  reg.add({
    method: "post",
    path: "/oauth/token",
    tag: "Device login",
    summary: "Poll for the user token (RFC 8628 device access token request)",
    description:
      "Answers 400 with `authorization_pending` until the user approves, `slow_down` when polled faster than the interval (which then grows by 5 s), `access_denied` when the user denied, `expired_token` after `expires_in`, and `invalid_grant` for an unknown or already used code. On approval: a user token (RS256 JWT, about 24 h).",
    auth: ["none"],
    body: {
      contentType: "application/x-www-form-urlencoded",
      example: `grant_type=${
        encodeURIComponent(DEVICE_GRANT_TYPE)
      }&device_code=GmRhmhcxhwAzkoEqiMEg_DnyEysNkuNhszIySk9eS&client_id=gwcli`,
      description: "`grant_type` (the device-code grant type), `device_code`, `client_id`.",
    },
    responses: {
      200: {
        description: "The user token",
        example: {
          access_token: "eyJhbGciOiJSUzI1NiIsImtpZCI6Ims…",
          token_type: "Bearer",
          expires_in: 86400,
        },
      },
      400: {
        description: "Pending, slow down, denied, expired, or a bad request",
        example: {
          error: "authorization_pending",
          error_description: "waiting for the user to approve",
        },
      },
      429: {
        description: "Too many polls from this address (Retry-After)",
        example: { error: "rate_limited", error_description: "too many requests: retry after 3 s" },
      },
    },
  }, async (c) => {
    const tooMany = limited(c, `device-poll:${clientIp(c)}`, s.options.rateLimits.devicePollPerIp);
    if (tooMany) return tooMany;
    const p = await params(c);
    if (p instanceof Response) return p;
    if (p.grant_type !== DEVICE_GRANT_TYPE) {
      return oauthError(
        c,
        400,
        "unsupported_grant_type",
        `grant_type must be ${DEVICE_GRANT_TYPE}`,
      );
    }
    if (!p.device_code || !p.client_id) {
      return oauthError(c, 400, "invalid_request", "device_code and client_id are required");
    }
    const result = await pollDeviceToken(s, p.device_code, p.client_id);
    if (!result.ok) return oauthError(c, 400, result.error, result.description);
    c.header("Cache-Control", "no-store");
    c.header("Pragma", "no-cache");
    const { ok: _, ...body } = result;
    return c.json(body);
  });
}
