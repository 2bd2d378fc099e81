/** When a machine token is renewed: once less than a third of its life is left. */
import {
  decodeTokenClaims,
  MACHINE_TOKEN_LIFETIME_MS,
  type MachineTokenPayload,
} from "../../shared/mod.ts";

/** Share of the lifetime left at which the token is renewed. */
export const RENEW_WHEN_LEFT = 1 / 3;

/**
 * The time (ms since the epoch) at which `payload` should be renewed: with a third of its life
 * left, or `renewBeforeMs` before it expires (`[cloud] renew_before_days`, never before it was
 * issued).
 */
export function renewalTime(payload: MachineTokenPayload, renewBeforeMs?: number): number {
  const expires = Date.parse(payload.expires_at);
  const iat = decodeTokenClaims(payload.machine_token)?.iat;
  const issued = typeof iat === "number" ? iat * 1000 : expires - MACHINE_TOKEN_LIFETIME_MS;
  if (renewBeforeMs !== undefined) return Math.max(issued, expires - renewBeforeMs);
  return expires - Math.max(0, expires - issued) * RENEW_WHEN_LEFT;
}
