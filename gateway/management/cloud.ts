/**
 * The cloud operations of the management API: `authorize`, `token`, `update`.
 *
 * They are refused with 403 while `[cloud] enabled` is not true (SPEC, Errors). With the cloud
 * enabled they answer 501: the flows themselves ship with the cloud work, and a placeholder must
 * never pretend that a token was stored or a config uploaded.
 */
import type { Context } from "hono";
import type { Logger } from "../../shared/log.ts";
import type { GatewayControl } from "./control.ts";
import type { ManagementEnv } from "./request_context.ts";
import { fail } from "./responses.ts";

/** The cloud operations under the prefix. */
export type CloudOperation = "authorize" | "token" | "update";

/** Every cloud operation, in route order. */
export const CLOUD_OPERATIONS: readonly CloudOperation[] = ["authorize", "token", "update"];

/** The message of the 403 `cloud_disabled` answer, with the fix. */
export const CLOUD_DISABLED_MESSAGE =
  "cloud integration is disabled: set [cloud] enabled = true in the gateway configuration, " +
  "run `gwcli gateway:reload`, then run `gwcli gateway:authorize` again";

const WHAT: Record<CloudOperation, string> = {
  authorize: "the interactive authorize flow",
  token: "storing a machine token",
  update: "uploading the configuration to the cloud service",
};

/** Handler of one cloud operation: 403 while the cloud is disabled, else 501 for now. */
export function cloudHandler(
  control: GatewayControl,
  logger: Logger,
  op: CloudOperation,
): (c: Context<ManagementEnv>) => Response {
  return (c) => {
    const requestId = c.get("requestId");
    if (control.config().cloud?.enabled !== true) {
      logger.warn("cloud operation refused: cloud integration is disabled", {
        operation: op,
        request_id: requestId,
      });
      return fail(c, 403, "cloud_disabled", CLOUD_DISABLED_MESSAGE);
    }
    logger.warn("cloud operation not implemented yet", { operation: op, request_id: requestId });
    return fail(
      c,
      501,
      "not_implemented",
      `${WHAT[op]} is not available in this gateway release yet: ` +
        "the cloud flow ships with the cloud issue",
    );
  };
}
