/**
 * Authentication failures as HTTP answers: 401 with a `WWW-Authenticate` challenge (RFC 7235;
 * RFC 6750 error codes for bearer tokens) when credentials are missing or wrong, 403 when they are
 * right but not enough. The message says what is wrong with the request; the credential itself is
 * never repeated, in the answer or in the log.
 */
import { GatewayError } from "../../errors.ts";

/** Characters a challenge parameter value may not carry (it is a quoted string). */
const UNSAFE = /["\\\r\n]/g;

/** A challenge: `Scheme key="value", …`. */
export function challenge(scheme: string, params: Record<string, string>): string {
  const parts = Object.entries(params).map(([k, v]) => `${k}="${v.replace(UNSAFE, "")}"`);
  return parts.length ? `${scheme} ${parts.join(", ")}` : scheme;
}

/** 401: no usable credentials, or wrong ones. `code` is the stable error code of the answer. */
export function unauthorized(code: string, message: string, wwwAuthenticate: string): GatewayError {
  const err = new GatewayError(401, code, message);
  err.headers = { "www-authenticate": wwwAuthenticate };
  return err;
}

/** 403: authenticated, but not allowed this request. */
export function forbidden(code: string, message: string, wwwAuthenticate?: string): GatewayError {
  const err = new GatewayError(403, code, message);
  if (wwwAuthenticate) err.headers = { "www-authenticate": wwwAuthenticate };
  return err;
}

/** 429 with Retry-After: the client address has used up its password checks for now. */
export function tooManyChecks(waitSecs: number): GatewayError {
  const err = new GatewayError(
    429,
    "too_many_password_checks",
    `too many password checks from this address; retry in ${waitSecs} s`,
  );
  err.headers = { "retry-after": String(waitSecs) };
  return err;
}

/** 503 with Retry-After: too many credential checks are waiting (password hashing is costly). */
export function busy(): GatewayError {
  const err = new GatewayError(
    503,
    "authentication_busy",
    "too many credential checks are in progress; retry shortly",
  );
  err.headers = { "retry-after": "1" };
  return err;
}
