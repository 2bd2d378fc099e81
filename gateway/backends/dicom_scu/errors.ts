/**
 * DIMSE failures as gateway errors: connection problems and rejections are 502, a timeout is 504,
 * a failure status of the peer is 502 `dicom_failure_status` with the status in `details` (the
 * dicom_scp endpoint passes that status on to its caller).
 */
import { DimseError } from "../../adapters/dimse/mod.ts";
import { statusHex, statusName } from "../../dicom/mod.ts";
import { GatewayError } from "../../errors.ts";

/** A GatewayError for anything an association or operation threw. */
export function dimseGatewayError(err: unknown, peer: string): GatewayError {
  if (err instanceof GatewayError) return err;
  if (err instanceof DimseError) {
    switch (err.kind) {
      case "timeout":
        return new GatewayError(504, "backend_timeout", `${peer}: ${err.message}`);
      case "connect":
        return new GatewayError(502, "backend_unavailable", err.message);
      case "rejected":
        return new GatewayError(502, "dicom_association_rejected", err.message, err.details);
      case "aborted":
        return new GatewayError(502, "dicom_aborted", `${peer}: ${err.message}`);
      default:
        return new GatewayError(502, "dicom_protocol_error", `${peer}: ${err.message}`);
    }
  }
  const message = err instanceof Error ? err.message : String(err);
  return new GatewayError(502, "dicom_protocol_error", `${peer}: ${message}`);
}

/** The error of a final failure status. */
export function statusError(
  op: string,
  peer: string,
  status: number,
  comment?: string,
): GatewayError {
  const why = comment ? `: ${comment}` : "";
  return new GatewayError(
    502,
    "dicom_failure_status",
    `${op} to ${peer} failed with status ${statusHex(status)} (${statusName(status)})${why}`,
    { dicom_status: statusHex(status), operation: op },
  );
}
