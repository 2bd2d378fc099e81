/**
 * C-STORE (send): contexts for the instances' SOP classes and syntaxes, one request each. An
 * instance goes only on a context of its own transfer syntax, or, uncompressed Little Endian, on
 * one of the other (dcmjs-dimse transcodes between the two); compressed data is never transcoded.
 */
import { lib, RawDataset, scanHeader, type ScuAssociation } from "../../adapters/dimse/mod.ts";
import {
  type P10File,
  statusHex,
  statusKind,
  statusName,
  studyAndSeriesOf,
  TS,
} from "../../dicom/mod.ts";

const LITTLE_ENDIAN: readonly string[] = [TS.explicitLE, TS.implicitLE];

/** True when data in `from` may be sent on a context that accepted `to`. */
function sendable(from: string, to: string | undefined): boolean {
  return from === to || (LITTLE_ENDIAN.includes(from) && LITTLE_ENDIAN.includes(to ?? ""));
}

/** Outcome of storing one instance. */
export interface StoreOutcome {
  sop_class_uid: string;
  sop_instance_uid: string;
  /** From the dataset, for the STOW-RS RetrieveURL of the instance. */
  study_instance_uid?: string;
  series_instance_uid?: string;
  status: string;
  status_name: string;
  comment?: string;
}

/**
 * Send every file; the outcome of each, in order. With `out` holding the outcomes of a first
 * attempt whose association broke, the files after them are sent (the one it broke on again:
 * storing an instance twice is harmless at the SCP).
 */
export async function runStore(
  assoc: ScuAssociation,
  files: P10File[],
  out: StoreOutcome[] = [],
): Promise<StoreOutcome[]> {
  for (const f of files.slice(out.length)) {
    const { study, series } = studyAndSeries(f);
    const base = {
      sop_class_uid: f.meta.sopClassUid,
      sop_instance_uid: f.meta.sopInstanceUid,
      study_instance_uid: study,
      series_instance_uid: series,
    };
    const context = assoc.accepted(f.meta.sopClassUid, f.meta.transferSyntax);
    if (!context || !sendable(f.meta.transferSyntax, context.getAcceptedTransferSyntaxUid())) {
      out.push({
        ...base,
        status: statusHex(0x0122),
        status_name: statusName(0x0122),
        comment: context
          ? `the peer accepted this SOP class only in ${context.getAcceptedTransferSyntaxUid()}, ` +
            `not in the instance's ${f.meta.transferSyntax}`
          : "the peer accepted no presentation context for this SOP class",
      });
      continue;
    }
    const request = new lib.requests.CStoreRequest(
      new RawDataset(f.dataset, f.meta.transferSyntax),
    );
    request.setAffectedSopClassUid(f.meta.sopClassUid);
    request.setAffectedSopInstanceUid(f.meta.sopInstanceUid);
    const res = await assoc.request(request);
    const status = res.getStatus();
    const outcome: StoreOutcome = {
      ...base,
      status: statusHex(status),
      status_name: statusName(status),
    };
    const comment = res.getErrorComment();
    if (comment) outcome.comment = comment;
    out.push(outcome);
  }
  return out;
}

const STUDY_UID = 0x0020000d;
const SERIES_UID = 0x0020000e;

/** The instance's study and series UIDs: a walk of its header (dcmjs when it cannot be walked). */
function studyAndSeries(f: P10File): { study?: string; series?: string } {
  const scan = scanHeader(f.dataset, f.meta.transferSyntax, [STUDY_UID, SERIES_UID], false);
  if (!scan) return studyAndSeriesOf(f);
  return { study: scan.values.get(STUDY_UID), series: scan.values.get(SERIES_UID) };
}

/** True when an outcome is a success or a warning. */
export function stored(o: StoreOutcome): boolean {
  const kind = statusKind(parseInt(o.status.slice(2), 16));
  return kind === "success" || kind === "warning";
}
