/** C-FIND through an association: matches as DICOM JSON, paging by cancelling early. */
import { datasetJson, JsonDataset, lib, type ScuAssociation } from "../../adapters/dimse/mod.ts";
import { type DicomJson, type DicomQuery, SOP, STATUS, statusKind } from "../../dicom/mod.ts";

/** Matches and the final status of a C-FIND. */
export interface FindResult {
  matches: DicomJson[];
  status: number;
  comment?: string;
}

/** The information model for a level: patient root for PATIENT, else study root. */
export function findModel(level: string): string {
  return level === "PATIENT" ? SOP.patientRootFind : SOP.studyRootFind;
}

/** Run one C-FIND; stops (C-CANCEL) once `offset + limit` matches are in. */
export async function runFind(assoc: ScuAssociation, query: DicomQuery): Promise<FindResult> {
  const model = findModel(query.level);
  const ctx = assoc.accepted(model);
  const request = new lib.requests.CFindRequest();
  request.setAffectedSopClassUid(model);
  request.setDataset(new JsonDataset(query.identifier, ctx?.getAcceptedTransferSyntaxUid() ?? ""));
  const wanted = query.limit === undefined ? Infinity : query.offset + query.limit;
  const matches: DicomJson[] = [];
  let cancelled = false;
  const final = await assoc.request(request, (res) => {
    if (matches.length >= wanted) return;
    matches.push(datasetJson(res.getDataset()));
    if (matches.length >= wanted && !cancelled) {
      cancelled = true;
      assoc.cancel(request);
    }
  });
  const status = final.getStatus();
  return {
    matches: matches.slice(query.offset, wanted),
    // A cancel we asked for is a complete answer for the page requested.
    status: cancelled && statusKind(status) === "cancel" ? STATUS.success : status,
    comment: final.getErrorComment() || undefined,
  };
}
