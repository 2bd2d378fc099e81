/** C-STORE (send): contexts for the instances' SOP classes and syntaxes, one request each. */
import { lib, RawDataset, type ScuAssociation } from "../../adapters/dimse/mod.ts";
import { type P10File, statusHex, statusKind, statusName } from "../../dicom/mod.ts";

/** Outcome of storing one instance. */
export interface StoreOutcome {
  sop_class_uid: string;
  sop_instance_uid: string;
  status: string;
  status_name: string;
  comment?: string;
}

/** Send every file; the outcome of each, in order. */
export async function runStore(assoc: ScuAssociation, files: P10File[]): Promise<StoreOutcome[]> {
  const out: StoreOutcome[] = [];
  for (const f of files) {
    const base = { sop_class_uid: f.meta.sopClassUid, sop_instance_uid: f.meta.sopInstanceUid };
    if (!assoc.accepted(f.meta.sopClassUid, f.meta.transferSyntax)) {
      out.push({
        ...base,
        status: statusHex(0x0122),
        status_name: statusName(0x0122),
        comment: "the peer accepted no presentation context for this SOP class",
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

/** True when an outcome is a success or a warning. */
export function stored(o: StoreOutcome): boolean {
  const kind = statusKind(parseInt(o.status.slice(2), 16));
  return kind === "success" || kind === "warning";
}
