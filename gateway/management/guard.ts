/**
 * The management API's front door, before any route (docs/security.md, "The management API"):
 *
 * 1. a request with an `Origin` header came from a browser page: refused (403
 *    `origin_not_allowed`); no browser is a client of this API, and a page the operator visits
 *    must not drive it;
 * 2. `Host` must be an IP address, `localhost`, or a name in `[management] allowed_hosts`
 *    (403 `host_not_allowed`): a DNS-rebinding page carries its own name;
 * 3. every route except `/healthz` and `/readyz` needs `Authorization: Bearer <token>`, compared
 *    in constant time (401 `unauthorized` with `WWW-Authenticate`); the token's role (roles.ts)
 *    is set as the request's caller, and a write (any method but GET and HEAD) needs `operator`
 *    at least (403 `forbidden`);
 * 4. a request with a body-carrying method must say `Content-Type: application/json` (415
 *    `unsupported_media_type`), so no HTML form or `text/plain` fetch can reach a handler.
 */
import type { MiddlewareHandler } from "hono";
import type { ManagementEnv } from "./request_context.ts";
import { fail } from "./responses.ts";
import { type ManagementCaller, type ManagementRole, requireRole } from "./roles.ts";
import { pathOf } from "./routing.ts";

/** What the guard checks against, read at each request (a reload may change it). */
export interface GuardSettings {
  /** The bearer token (role `admin`). */
  token(): string;
  /** Further tokens with roles (`[management.tokens.<name>]`). */
  tokens?(): readonly RoleToken[];
  /** Host names accepted besides IP literals and `localhost` (lower case). */
  allowedHosts(): readonly string[];
  /**
   * Told of every call a token's role does not allow (the 403 `forbidden`), with the request:
   * the gateway records it in the audit trail with who asked.
   */
  onRoleRefused?(caller: ManagementCaller, need: ManagementRole, request: Request): void;
}

/** A token of `[management.tokens.<name>]`. */
export interface RoleToken {
  name: string;
  role: ManagementRole;
  token: string;
}

/** Who holds `presented`: the main token is `admin`; undefined when no token matches. */
export function callerFor(
  settings: GuardSettings,
  presented: string,
): ManagementCaller | undefined {
  // Every token is compared (constant time each), so the answer's time does not say which.
  let found: ManagementCaller | undefined;
  if (sameToken(presented, settings.token())) found = { name: "admin", role: "admin" };
  for (const t of settings.tokens?.() ?? []) {
    if (sameToken(presented, t.token) && !found) found = { name: t.name, role: t.role };
  }
  return found;
}

/** Routes answered without a token: they reveal only liveness and readiness. */
const OPEN_PATHS = new Set(["/healthz", "/readyz"]);

const IPV4 = /^\d{1,3}(?:\.\d{1,3}){3}$/;

/** The host part of a `Host` header value (no port, brackets kept off IPv6), lower case. */
export function hostName(host: string): string {
  const h = host.trim().toLowerCase();
  if (h.startsWith("[")) return h.slice(1, h.indexOf("]") > 0 ? h.indexOf("]") : undefined);
  const colon = h.lastIndexOf(":");
  return colon >= 0 && h.indexOf(":") === colon ? h.slice(0, colon) : h;
}

/** True when `Host` may reach the API. */
export function hostAllowed(host: string | undefined, allowed: readonly string[]): boolean {
  if (!host) return false;
  const name = hostName(host);
  if (name === "localhost" || IPV4.test(name) || name.includes(":")) return true;
  return allowed.some((a) => a.toLowerCase() === name);
}

/** Constant-time comparison of two strings (their lengths are not secret). */
export function sameToken(a: string, b: string): boolean {
  const x = new TextEncoder().encode(a);
  const y = new TextEncoder().encode(b);
  let diff = x.length ^ y.length;
  for (let i = 0; i < Math.max(x.length, y.length); i++) diff |= (x[i] ?? 0) ^ (y[i] ?? 0);
  return diff === 0;
}

const BODY_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/** The guard middleware. */
export function managementGuard(settings: GuardSettings): MiddlewareHandler<ManagementEnv> {
  return async (c, next) => {
    if (c.req.header("origin") !== undefined) {
      return fail(
        c,
        403,
        "origin_not_allowed",
        "requests from web pages are refused: the management API has no browser clients",
      );
    }
    // Deno.serve builds the URL from Host (HTTP/1.1) or :authority (HTTP/2).
    const host = c.req.header("host") ?? new URL(c.req.url).host;
    if (!hostAllowed(host, settings.allowedHosts())) {
      return fail(
        c,
        403,
        "host_not_allowed",
        `Host ${JSON.stringify(host)} is not this gateway: use its IP ` +
          "address, localhost, or add the name to [management] allowed_hosts",
      );
    }
    if (OPEN_PATHS.has(pathOf(c.req.url))) return await next();
    const presented = /^Bearer\s+(\S+)\s*$/i.exec(c.req.header("authorization") ?? "")?.[1];
    const caller = presented ? callerFor(settings, presented) : undefined;
    if (!caller) {
      return fail(
        c,
        401,
        "unauthorized",
        presented
          ? "the management token is not valid"
          : "send the management token as `Authorization: Bearer <token>` (see docs/management-api.md)",
        { "WWW-Authenticate": 'Bearer realm="gateway-management"' },
      );
    }
    c.set("caller", caller);
    const onRefused = settings.onRoleRefused;
    if (onRefused) c.set("roleRefused", (who, need) => onRefused(who, need, c.req.raw));
    if (c.req.method !== "GET" && c.req.method !== "HEAD") {
      const refused = requireRole(c, "operator");
      if (refused) return refused;
    }
    if (BODY_METHODS.has(c.req.method)) {
      const type = (c.req.header("content-type") ?? "").split(";")[0].trim().toLowerCase();
      if (type !== "application/json") {
        return fail(
          c,
          415,
          "unsupported_media_type",
          `${c.req.method} needs \`Content-Type: application/json\` (got ${
            JSON.stringify(type || "none")
          })`,
        );
      }
    }
    await next();
  };
}
