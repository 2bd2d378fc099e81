/**
 * Roles of the management API's tokens (docs/management-api.md, "Roles"). The `[management]
 * token_file` (or generated, or `GATEWAY_MANAGEMENT_TOKEN`) token is `admin`; each
 * `[management.tokens.<name>]` token has the role its table names:
 *
 * - `viewer`: every read, and tracked messages' metadata, never their content;
 * - `operator`: also views content, replays and resends messages, retries dead letters;
 * - `admin`: everything (reload, cloud operations, purging dead letters).
 *
 * The guard authenticates the bearer token and sets the caller; a route that needs more than
 * `viewer` (every write needs `operator` at least) asks {@link requireRole}.
 */
import type { Context } from "hono";
import type { ManagementCaller, ManagementRole } from "./request_context.ts";
import { fail } from "./responses.ts";

const RANK: Record<ManagementRole, number> = { viewer: 0, operator: 1, admin: 2 };

export type { ManagementCaller, ManagementRole };

/** True when `have` includes the rights of `need`. */
export function roleAllows(have: ManagementRole, need: ManagementRole): boolean {
  return RANK[have] >= RANK[need];
}

/** The caller of an authenticated request (undefined on `/healthz`, `/readyz`). */
// deno-lint-ignore no-explicit-any
export function callerOf(c: Context<any>): ManagementCaller | undefined {
  return c.get("caller") as ManagementCaller | undefined;
}

/**
 * Checks that the request's token has `need`: undefined when it has, else the 403
 * `forbidden` response to return, naming the role needed.
 *
 * @example
 * ```ts ignore
 * app.post("/admin/x", (c) => requireRole(c, "operator") ?? c.json({ ok: true }));
 * ```
 */
// deno-lint-ignore no-explicit-any
export function requireRole(c: Context<any>, need: ManagementRole): Response | undefined {
  const caller = callerOf(c);
  if (caller && roleAllows(caller.role, need)) return undefined;
  if (caller) c.get("roleRefused")?.(caller, need);
  return fail(
    c,
    403,
    "forbidden",
    caller
      ? `this needs the ${need} role; token ${caller.name} is ${caller.role}`
      : `this needs the ${need} role`,
  );
}
