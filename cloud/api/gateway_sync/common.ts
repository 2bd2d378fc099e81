/** What the routes of this folder share: examples, request bodies, middleware and helpers. */
import type { MiddlewareHandler } from "hono";
import { z } from "zod";
import type { MachineAbility } from "../../../shared/mod.ts";
import type { AppEnv } from "../env.ts";
import { forbidden } from "../errors.ts";
import { machineOf, requireBearer } from "../middleware.ts";

/** The example gateway id of the documentation. */
export const GATEWAY_ID = "0190f5e1-2b3c-7d4e-8f5a-6b7c8d9e0f1a";

/** An example machine-token answer (authorize and renew). */
export const PAYLOAD_EXAMPLE = {
  machine_token: "eyJhbGciOiJSUzI1NiIsImtpZCI6Ims…",
  expires_at: "2025-02-14T10:00:00.000Z",
  gateway_id: GATEWAY_ID,
  gateway_code: "edge-berlin-1",
  abilities: [
    "config:read",
    "config:report",
    "config:upload",
    "status:write",
    "transforms:read",
    "token:renew",
  ],
};

/** The documented 401 answer of the machine-token routes. */
export const UNAUTHORIZED = {
  description: "Missing, malformed, expired or revoked token",
  example: { error: { code: "unauthorized", message: "machine token revoked" } },
};

/** The JSON form of an uploaded local configuration. */
export const uploadJson = z.strictObject({ toml: z.string() });

/** Requires `ability` on the caller's machine token. */
export function ability(a: MachineAbility): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (!machineOf(c).abilities.includes(a)) {
      throw forbidden(`this machine token lacks the ${a} ability`);
    }
    await next();
  };
}

/** The ETag of a configuration. */
export function configEtag(config: { sha256: string }): string {
  return `"${config.sha256.slice(0, 32)}"`;
}

/** Whether an `If-None-Match` header names `etag` (or `*`). */
export function matches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  return ifNoneMatch.trim() === "*" ||
    ifNoneMatch.split(",").map((t) => t.trim().replace(/^W\//, "")).includes(etag);
}

/** Every route but authorize takes a machine token. */
export const machine = requireBearer("machine");
