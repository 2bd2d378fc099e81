/**
 * The one error of a request whose audit record could not be made durable (`durability =
 * "sync"`): its answer is withheld and the client gets 503 `audit_unavailable` instead, since an
 * answer released without its record is exactly the silent loss the trail exists to prevent.
 */
import { GatewayError } from "../errors.ts";

/** The 503 `audit_unavailable` answered in place of a request whose record was not kept. */
export function auditUnavailable(reason: string): GatewayError {
  return new GatewayError(
    503,
    "audit_unavailable",
    "the audit record of this request could not be written, so its answer was withheld " +
      "(the backend may have acted on it)",
    undefined,
    reason,
  );
}
