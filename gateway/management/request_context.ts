/** Per-request context of the management API: request id, response headers and the access log. */
import type { MiddlewareHandler } from "hono";
import type { Logger } from "../../shared/mod.ts";
import { requestIdOf } from "../pipeline/mod.ts";
import { pathOf } from "./routing.ts";

/** A role of a management token, weakest first (roles.ts). */
export type ManagementRole = "viewer" | "operator" | "admin";

/** Who called: the token's name (`admin` for the main token) and its role. */
export interface ManagementCaller {
  /** `[management.tokens.<name>]`'s name, or `admin` for the main token. */
  name: string;
  role: ManagementRole;
}

/** Hono environment of the management app. */
export type ManagementEnv = {
  Variables: {
    requestId: string;
    /** The authenticated token's name and role (roles.ts); unset on `/healthz`, `/readyz`. */
    caller?: ManagementCaller;
    /** Told of every call a role refuses (roles.ts requireRole), to audit who asked. */
    roleRefused?: (caller: ManagementCaller, need: ManagementRole) => void;
  };
};

/**
 * The request id to use: a valid incoming `X-Request-Id`, else a new UUID (the data plane's rule:
 * no header injection, bounded size).
 */
export const requestIdFor = requestIdOf;

function stamp(res: Response, id: string): void {
  try {
    res.headers.set("X-Request-Id", id);
    res.headers.set("Cache-Control", "no-store");
  } catch {
    // Immutable headers (a Response from fetch): nothing of ours returns one; never fail on it.
  }
}

/**
 * Outermost middleware: sets the request id, stamps `X-Request-Id` and `Cache-Control: no-store`
 * on every response (errors included) and writes one access-log line. Reads log at debug (probes
 * and scrapes are frequent), writes and errors at info. Headers and bodies are never logged.
 */
export function requestContext(logger: Logger): MiddlewareHandler<ManagementEnv> {
  return async (c, next) => {
    const id = requestIdFor(c.req.header("x-request-id"));
    c.set("requestId", id);
    const start = performance.now();
    await next();
    stamp(c.res, id);
    const status = c.res.status;
    const level = (c.req.method === "GET" || c.req.method === "HEAD") && status < 400
      ? "debug"
      : "info";
    if (logger.enabled(level)) {
      logger[level]("management request", {
        request_id: id,
        method: c.req.method,
        path: pathOf(c.req.url),
        status,
        duration_ms: Math.round((performance.now() - start) * 100) / 100,
      });
    }
  };
}
