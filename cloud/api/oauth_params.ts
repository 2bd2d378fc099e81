/**
 * Parameters and errors of the OAuth endpoints. Their errors follow RFC 6749 §5.2
 * (`{"error":"invalid_grant","error_description":…}`), which OAuth clients expect, rather than the
 * `{"error":{…}}` shape of the rest of the API.
 */
import type { Context } from "hono";
import type { Services } from "../services.ts";
import { readBytes } from "./body.ts";
import type { AppEnv } from "./env.ts";
import { ApiError } from "./errors.ts";
import { clientIp } from "./middleware.ts";

/** Largest body of an OAuth request. */
const MAX_BODY = 16 * 1024;

/** An OAuth error answer. */
export function oauthError(
  c: Context<AppEnv>,
  status: 400 | 401 | 413 | 415 | 429,
  error: string,
  description: string,
) {
  c.header("Cache-Control", "no-store");
  return c.json({ error, error_description: description }, status);
}

/** Reads form (or JSON) parameters of an OAuth request (string values only). */
export async function oauthParams(c: Context<AppEnv>): Promise<Record<string, string> | Response> {
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

/** 429 with Retry-After when `key` spent `budget`, else null. */
export function oauthLimited(
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

/**
 * The parameters of a request to the token or revocation endpoint, after the per-address budget
 * they share (`devicePollPerIp`); a Response when refused or unreadable.
 */
export async function tokenEndpointParams(
  c: Context<AppEnv>,
  s: Services,
): Promise<Record<string, string> | Response> {
  const tooMany = oauthLimited(
    c,
    `device-poll:${clientIp(c)}`,
    s.options.rateLimits.devicePollPerIp,
  );
  return tooMany ?? await oauthParams(c);
}

/** The documented 429 of the token and revocation endpoints. */
export const TOKEN_ENDPOINT_429 = {
  description: "Too many requests from this address (Retry-After)",
  example: { error: "rate_limited", error_description: "too many requests: retry after 3 s" },
};
