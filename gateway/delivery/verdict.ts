/**
 * What an answer from the destination means for a queued message: delivered, worth retrying
 * (the destination is down or busy: 5xx, 408, 429 with `Retry-After` honoured; a DIMSE
 * out-of-resources or processing failure), or dead (a refusal that would be the same next time:
 * any other 4xx, a DIMSE failure such as SOP class not supported).
 */
import { parseStatus, statusKind } from "../dicom/status/mod.ts";
import type { ResponseEnvelope } from "../envelope.ts";

/** The fate of one attempt. */
export type Verdict =
  | { kind: "delivered" }
  | { kind: "retry"; reason: string; retryAfterMs?: number }
  | { kind: "dead"; reason: string };

/** Longest Retry-After honoured (a server asking for days is asked again sooner). */
const MAX_RETRY_AFTER_MS = 3_600_000;

/** `Retry-After` (seconds or an HTTP date) in ms, or undefined. */
export function retryAfterMs(value: string | null, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const seconds = /^\s*\d+\s*$/.test(value) ? Number(value) * 1000 : Date.parse(value) - now;
  if (!Number.isFinite(seconds) || seconds < 0) return undefined;
  return Math.min(seconds, MAX_RETRY_AFTER_MS);
}

/** DIMSE failure statuses that may pass: out of resources (A7xx), processing failure (0110). */
function dimseRetryable(status: number): boolean {
  return (status & 0xff00) === 0xa700 || status === 0x0110 || status === 0x0213;
}

/** The verdict on an answer. */
export function verdictOf(res: ResponseEnvelope): Verdict {
  const dimse = parseStatus(res.headers.get("x-dicom-status"));
  if (dimse !== undefined && statusKind(dimse) === "failure") {
    const hex = `0x${dimse.toString(16).toUpperCase().padStart(4, "0")}`;
    return dimseRetryable(dimse)
      ? { kind: "retry", reason: `DIMSE status ${hex}` }
      : { kind: "dead", reason: `DIMSE status ${hex}` };
  }
  const s = res.status;
  if (s < 400) return { kind: "delivered" };
  if (s >= 500 || s === 408 || s === 429) {
    return {
      kind: "retry",
      reason: `HTTP ${s}`,
      retryAfterMs: retryAfterMs(res.headers.get("retry-after")),
    };
  }
  return { kind: "dead", reason: `HTTP ${s}` };
}
