/** Middleware of the API: request ids, access log, bearer authentication, per-token budgets. */
import { createHash } from "node:crypto";
import type { Context, MiddlewareHandler } from "hono";
import {
  authenticate,
  type BearerKind,
  bearerKind,
  bearerToken,
  type MachinePrincipal,
  TokenError,
  type UserPrincipal,
} from "../auth/mod.ts";
import type { Services } from "../services.ts";
import type { AppEnv } from "./env.ts";
import { forbidden, tooManyRequests, unauthorized as unauthorizedError } from "./errors.ts";
import type { Budget } from "../rate_limit/mod.ts";

/** Sets `services` and `requestId`, answers with `X-Request-Id`, writes one access-log line. */
export function requestContext(s: Services): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const incoming = c.req.header("x-request-id");
    const requestId = incoming && /^[A-Za-z0-9._-]{1,64}$/.test(incoming)
      ? incoming
      : crypto.randomUUID();
    c.set("requestId", requestId);
    c.set("services", s);
    const started = performance.now();
    await next();
    c.header("X-Request-Id", requestId);
    s.options.logger.info("request", {
      request_id: requestId,
      method: c.req.method,
      path: c.req.path,
      status: c.res.status,
      ms: Math.round((performance.now() - started) * 10) / 10,
    });
  };
}

/** The client's address (the first X-Forwarded-For entry when the proxy is trusted). */
export function clientIp(c: Context<AppEnv>): string {
  const s = c.get("services");
  if (s.options.trustProxy) {
    const forwarded = c.req.header("x-forwarded-for")?.split(",")[0]?.trim();
    if (forwarded) return forwarded;
  }
  return c.env?.remoteAddr?.hostname ?? "unknown";
}

/** Spends one request of `budget` for `key`, answering 429 with Retry-After when it is spent. */
export function spend(c: Context<AppEnv>, key: string, budget: Budget): void {
  const decision = c.get("services").limiter.take(key, budget);
  if (!decision.allowed) throw tooManyRequests(decision.retryAfterSeconds);
}

/**
 * Requires `Authorization: Bearer` with one of `kinds`; sets `principal`. A failing credential
 * is locked out on its own (the same bad token again gets 429); failures also count against the
 * caller's IP, past whose budget bad tokens get 429 while valid ones still pass, so that nobody
 * behind a shared address is locked out by someone else's guessing. Successes count against the
 * token's own budget.
 */
export function requireBearer(...kinds: BearerKind[]): MiddlewareHandler<AppEnv> {
  return bearerAuth(kinds);
}

/**
 * {@link requireBearer} with the `WWW-Authenticate` challenge of a 401 chosen by the route (the MCP
 * endpoint names its protected resource metadata there, RFC 9728 §5.1).
 */
export function bearerAuth(
  kinds: BearerKind[],
  challenge?: (c: Context<AppEnv>) => string,
): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const s = c.get("services");
    const limits = s.options.rateLimits;
    const unauthorized = (message: string) => unauthorizedError(message, challenge?.(c));
    const token = bearerToken(c.req.header("authorization"));
    if (!token) throw unauthorized("send Authorization: Bearer <token>");
    const credentialKey = `auth-fail-credential:${digest(token)}`;
    const credential = s.limiter.peek(credentialKey, limits.authFailuresPerCredential);
    if (!credential.allowed) throw tooManyRequests(credential.retryAfterSeconds);
    const ipKey = `auth-fail:${clientIp(c)}`;
    /** Counts a failure; the answer is 429 once the address is over its budget, else 401. */
    const failed = (message: string): never => {
      s.limiter.take(credentialKey, limits.authFailuresPerCredential);
      const ip = s.limiter.take(ipKey, limits.authFailuresPerIp);
      if (!ip.allowed) throw tooManyRequests(ip.retryAfterSeconds);
      throw unauthorized(message);
    };
    const kind = bearerKind(token);
    if (!kind || !kinds.includes(kind)) {
      failed(`this route takes ${kinds.map(describe).join(" or ")}`);
    }
    let principal;
    try {
      principal = await authenticate(s, token, kind);
    } catch (err) {
      if (!(err instanceof TokenError)) throw err;
      return failed(err.message);
    }
    const budgetKey = principal.kind === "machine"
      ? `machine:${principal.gatewayId}`
      : principal.kind === "api_token"
      ? `api:${principal.apiToken!.id}`
      : principal.kind === "mcp_access"
      ? `mcp:${principal.grant!.id}`
      : `user:${principal.user.id}`;
    spend(c, budgetKey, s.options.rateLimits.perToken);
    c.set("principal", principal);
    await next();
  };
}

/**
 * Hex SHA-256 of a presented token: the limiter never holds token text. node:crypto hashes in the
 * call (WebCrypto's digest is an asynchronous operation per request, the largest cost of a
 * configuration pull before).
 */
function digest(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

function describe(kind: BearerKind): string {
  return kind === "api_token"
    ? "an API token"
    : kind === "user_token"
    ? "a user token"
    : kind === "mcp_access"
    ? "an MCP access token"
    : "a machine token";
}

/** The calling user (routes behind requireBearer with user kinds). */
export function userOf(c: Context<AppEnv>): UserPrincipal {
  const p = c.get("principal");
  if (p.kind === "machine") throw forbidden("machine tokens cannot call this route");
  return p;
}

/** The calling user when it called with a user token; 403 with `why` for API tokens. */
export function userTokenOf(c: Context<AppEnv>, why: string): UserPrincipal {
  const p = userOf(c);
  if (p.kind !== "user_token") throw forbidden(why);
  return p;
}

/** The calling gateway (routes behind requireBearer("machine")). */
export function machineOf(c: Context<AppEnv>): MachinePrincipal {
  const p = c.get("principal");
  if (p.kind !== "machine") throw forbidden("only a gateway's machine token can call this route");
  return p;
}
