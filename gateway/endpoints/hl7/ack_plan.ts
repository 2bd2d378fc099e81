/**
 * Which acknowledgements a message gets (HL7 v2 2.9.2-2.9.3): in original mode one `AA`/`AE`/`AR`
 * for the pipeline's outcome; in enhanced mode (MSH-15 or MSH-16 set, or the endpoint's
 * `ack_mode = "enhanced"`) a commit ACK (`CA`/`CE`/`CR`) when MSH-15's condition holds, then an
 * application ACK (`AA`/`AE`/`AR`) when MSH-16's holds. Conditions: `AL` always, `NE` never, `ER`
 * on an error or reject only, `SU` on success only.
 */
import type { AckCode } from "../../codecs/mod.ts";

/** How the endpoint picks the acknowledgement mode (the `ack_mode` option). */
export type AckMode = "message" | "original" | "enhanced";

/** The pipeline's outcome as acknowledgements say it: accepted, error or reject. */
export type Verdict = "accept" | "error" | "reject";

/** The codes of a verdict in each mode. */
const ORIGINAL: Record<Verdict, AckCode> = { accept: "AA", error: "AE", reject: "AR" };
const COMMIT: Record<Verdict, AckCode> = { accept: "CA", error: "CE", reject: "CR" };

/** Whether an MSH-15/16 condition asks for an acknowledgement of `verdict`. */
function asks(condition: string, verdict: Verdict): boolean {
  switch (condition.toUpperCase()) {
    case "NE":
      return false;
    case "ER":
      return verdict !== "accept";
    case "SU":
      return verdict === "accept";
    default: // AL, and anything unknown: acknowledge rather than leave the sender waiting
      return true;
  }
}

/** True when the message is acknowledged in enhanced mode. */
export function isEnhanced(mode: AckMode, acceptAckType: string, appAckType: string): boolean {
  if (mode === "original") return false;
  if (mode === "enhanced") return true;
  return acceptAckType !== "" || appAckType !== "";
}

/**
 * The acknowledgement codes to send for `verdict`, in order (none, one or two). `applicationKnown`
 * is false when the message was only queued (the application's answer comes later, so enhanced
 * mode sends no application ACK for it).
 */
export function ackCodes(
  mode: AckMode,
  acceptAckType: string,
  appAckType: string,
  verdict: Verdict,
  applicationKnown = true,
): AckCode[] {
  if (!isEnhanced(mode, acceptAckType, appAckType)) return [ORIGINAL[verdict]];
  const out: AckCode[] = [];
  // Enhanced mode: an empty MSH-15 means a commit ACK always, an empty MSH-16 none.
  if (asks(acceptAckType || "AL", verdict)) out.push(COMMIT[verdict]);
  if (applicationKnown && asks(appAckType || "NE", verdict)) out.push(ORIGINAL[verdict]);
  return out;
}

/** The status the record and metrics count an acknowledgement as. */
export function ackStatus(verdict: Verdict): number {
  return verdict === "accept" ? 200 : verdict === "reject" ? 400 : 502;
}
