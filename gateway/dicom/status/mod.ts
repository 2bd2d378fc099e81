/**
 * DIMSE status codes (PS3.4, PS3.7 Annex C): names, categories and hex formatting. A folder of its
 * own so that what reads a status (the delivery verdict of a backend's answer) does not load the
 * DICOM libraries the rest of `gateway/dicom` uses.
 *
 * @example
 * ```ts
 * import { parseStatus, statusKind, statusName } from "./mod.ts";
 *
 * const status = parseStatus("0xA700")!;
 * console.log(statusKind(status), statusName(status)); // failure Refused: out of resources
 * ```
 *
 * @module
 */

/** Status codes the gateway sends or interprets. */
export const STATUS = {
  success: 0x0000,
  cancel: 0xfe00,
  pending: 0xff00,
  pendingWarning: 0xff01,
  warningSubOps: 0xb000,
  outOfResources: 0xa700,
  outOfResourcesMatches: 0xa701,
  outOfResourcesSubOps: 0xa702,
  moveDestinationUnknown: 0xa801,
  identifierMismatch: 0xa900,
  unableToProcess: 0xc000,
  processingFailure: 0x0110,
  sopClassNotSupported: 0x0122,
  notAuthorized: 0x0124,
  duplicateInstance: 0x0111,
} as const;

const NAMES: Record<number, string> = {
  [STATUS.success]: "Success",
  [STATUS.cancel]: "Cancel",
  [STATUS.pending]: "Pending",
  [STATUS.pendingWarning]: "Pending (optional keys not supported)",
  [STATUS.warningSubOps]: "Warning: sub-operations complete, one or more failures or warnings",
  [STATUS.outOfResources]: "Refused: out of resources",
  [STATUS.outOfResourcesMatches]:
    "Refused: out of resources, unable to calculate number of matches",
  [STATUS.outOfResourcesSubOps]: "Refused: out of resources, unable to perform sub-operations",
  [STATUS.moveDestinationUnknown]: "Refused: move destination unknown",
  [STATUS.identifierMismatch]: "Failed: identifier does not match SOP class",
  [STATUS.unableToProcess]: "Failed: unable to process",
  [STATUS.processingFailure]: "Failed: processing failure",
  [STATUS.sopClassNotSupported]: "Failed: SOP class not supported",
  [STATUS.notAuthorized]: "Refused: not authorized",
  [STATUS.duplicateInstance]: "Warning: duplicate SOP instance",
};

/** Kind of a status (PS3.7 C): success, pending, cancel, warning or failure. */
export type StatusKind = "success" | "pending" | "cancel" | "warning" | "failure";

/** The kind of a status code. */
export function statusKind(status: number): StatusKind {
  if (status === STATUS.success) return "success";
  if (status === STATUS.pending || status === STATUS.pendingWarning) return "pending";
  if (status === STATUS.cancel) return "cancel";
  if (status === 0x0001 || status === 0x0107 || status === 0x0116 || status === 0x0111) {
    return "warning";
  }
  if ((status & 0xf000) === 0xb000) return "warning";
  return "failure";
}

/** `0xA801` style text of a status. */
export function statusHex(status: number): string {
  return `0x${status.toString(16).toUpperCase().padStart(4, "0")}`;
}

/** A human-readable name of a status code. */
export function statusName(status: number): string {
  const name = NAMES[status];
  if (name) return name;
  const kind = statusKind(status);
  if (kind === "failure" && (status & 0xf000) === 0xc000) return "Failed: unable to process";
  if (kind === "failure" && (status & 0xff00) === 0xa700) return "Refused: out of resources";
  return kind === "warning" ? "Warning" : kind === "failure" ? "Failed" : kind;
}

/** Parse a status written in hex (`0xA700` or `A700`); undefined when invalid. */
export function parseStatus(text: string | null | undefined): number | undefined {
  const m = /^\s*(?:0x)?([0-9a-f]{1,4})\s*$/i.exec(text ?? "");
  return m ? parseInt(m[1], 16) : undefined;
}
