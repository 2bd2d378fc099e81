/**
 * The cloud operations of the management API (docs/management-api.md, "Cloud operations"):
 *
 * - `POST /{prefix}/token`: a machine-token payload, checked and verified with the cloud, stored.
 * - `POST /{prefix}/authorize`: a user token (`{"user_token": ...}` in the body) exchanged with
 *   the cloud for a machine token, which is stored.
 * - `POST /{prefix}/update`: the local configuration files uploaded to the cloud.
 * - `POST /{prefix}/cloud-pin/reset`: forget the team, gateway id and issuer the gateway is pinned
 *   to (gateway/cloud_client/pin.ts), so that a token of another team or cloud can be accepted.
 *
 * All three are refused with 403 `cloud_disabled` while `[cloud] enabled` is not true (SPEC,
 * Errors). The work is the cloud integration's (gateway/cloud); this module maps HTTP to it.
 */
import type { Context } from "hono";
import type { Logger } from "../../shared/mod.ts";
import type { CloudControl } from "../cloud_client/mod.ts";
import { GatewayError } from "../errors.ts";
import type { GatewayControl } from "./control.ts";
import type { ManagementEnv } from "./request_context.ts";
import { fail } from "./responses.ts";

/** The cloud operations under the prefix. */
export type CloudOperation = "authorize" | "token" | "update" | "cloud-pin/reset";

/** Every cloud operation, in route order. */
export const CLOUD_OPERATIONS: readonly CloudOperation[] = [
  "authorize",
  "token",
  "update",
  "cloud-pin/reset",
];

/** The message of the 403 `cloud_disabled` answer, with the fix. */
export const CLOUD_DISABLED_MESSAGE =
  "cloud integration is disabled: set [cloud] enabled = true in the gateway configuration, " +
  "run `gwcli gateway:reload`, then run `gwcli gateway:authorize` again";

/** A request body as JSON: undefined when empty; `invalid` when it does not parse. */
async function jsonBody(c: Context<ManagementEnv>): Promise<unknown> {
  const text = await c.req.text();
  if (text.trim() === "") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return INVALID_JSON;
  }
}

const INVALID_JSON = Symbol("invalid JSON");

const RUN: Record<
  CloudOperation,
  (cloud: CloudControl, c: Context<ManagementEnv>) => Promise<unknown>
> = {
  token: async (cloud, c) => {
    const body = await jsonBody(c);
    if (body === INVALID_JSON || body === undefined) {
      return fail(
        c,
        400,
        "invalid_machine_token",
        "body: send the machine token payload as JSON " +
          "({machine_token, expires_at, gateway_id, gateway_code, abilities?})",
      );
    }
    return await cloud.storeToken(body);
  },
  authorize: async (cloud, c) => {
    const body = await jsonBody(c);
    if (body === INVALID_JSON) {
      return fail(
        c,
        400,
        "bad_request",
        'body: not JSON; send {"user_token": string, "gateway_code"?: string}',
      );
    }
    // `Authorization` carries the management token; the user's cloud token comes in the body.
    const userToken = (body as { user_token?: unknown } | undefined)?.user_token;
    return await cloud.authorize(
      typeof userToken === "string" ? `Bearer ${userToken}` : undefined,
      body,
    );
  },
  update: async (cloud) => await cloud.uploadConfig(),
  "cloud-pin/reset": async (cloud) => await cloud.resetPin(),
};

/** Handler of one cloud operation: 403 while the cloud is disabled, else the operation. */
export function cloudHandler(
  control: GatewayControl,
  logger: Logger,
  op: CloudOperation,
): (c: Context<ManagementEnv>) => Promise<Response> {
  return async (c) => {
    const requestId = c.get("requestId");
    if (control.config().cloud?.enabled !== true || !control.cloud) {
      logger.warn("cloud operation refused: cloud integration is disabled", {
        operation: op,
        request_id: requestId,
      });
      return fail(c, 403, "cloud_disabled", CLOUD_DISABLED_MESSAGE);
    }
    try {
      const result = await RUN[op](control.cloud, c);
      return result instanceof Response ? result : c.json(result);
    } catch (err) {
      // GatewayErrors become their status and code in the app's error handler; log why here.
      if (err instanceof GatewayError) {
        logger.warn("cloud operation failed", {
          operation: op,
          request_id: requestId,
          status: err.status,
          code: err.code,
          reason: err.message,
        });
      }
      throw err;
    }
  };
}
