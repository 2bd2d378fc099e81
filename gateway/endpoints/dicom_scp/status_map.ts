/**
 * Pipeline outcomes -> DIMSE statuses. A backend may state the status itself: the response header
 * `x-dicom-status`, or `details.dicom_status` of its error (the dicom_scu backend does both, so a
 * PACS's status reaches the caller unchanged). Otherwise: 413/429/503/507 are "out of resources"
 * (0xA700, 0xA702 for retrievals) and every other error is 0xC000 "unable to process".
 */
import { parseStatus, STATUS } from "../../dicom/mod.ts";
import type { GatewayError } from "../../errors.ts";

const OUT_OF_RESOURCES = new Set([413, 429, 503, 507]);

/** The final status of an operation that failed with `err`. */
export function failureStatus(op: string, err: GatewayError): number {
  const stated = parseStatus((err.details as { dicom_status?: string } | undefined)?.dicom_status);
  if (stated !== undefined) return stated;
  if (OUT_OF_RESOURCES.has(err.status)) {
    return op === "C-GET" || op === "C-MOVE" ? STATUS.outOfResourcesSubOps : STATUS.outOfResources;
  }
  return STATUS.unableToProcess;
}

/** An Error Comment (LO: at most 64 characters). */
export function comment(text: string): string {
  return text.length <= 64 ? text : `${text.slice(0, 61)}...`;
}
