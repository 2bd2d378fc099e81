/**
 * C-FIND through an association: matches as DICOM JSON, paging by cancelling early; a QIDO-RS
 * search with matching keys above its level runs as one search per level (gateway/dicom/
 * query_levels.ts), on the same association.
 */
import {
  datasetJson,
  JsonDataset,
  lazyDatasetJson,
  lib,
  newRequest,
  type ScuAssociation,
} from "../../adapters/dimse/mod.ts";
import {
  type DicomJson,
  type DicomQuery,
  inheritFrom,
  SOP,
  splitHierarchical,
  STATUS,
  statusKind,
} from "../../dicom/mod.ts";

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

/** The information model of a query: the one it names (Modality Worklist...), else by level. */
export function queryModel(query: DicomQuery): string {
  return query.model ?? findModel(query.level);
}

/**
 * Run one C-FIND; stops (C-CANCEL) once `offset + limit` matches are in. With `lazy`, matches
 * are decoded only when something looks at them (a DIMSE caller gets untouched ones as they
 * came: adapters/dimse/lazy_json.ts).
 */
export async function runFind(
  assoc: ScuAssociation,
  query: DicomQuery,
  lazy = false,
): Promise<FindResult> {
  const model = queryModel(query);
  const ctx = assoc.accepted(model);
  const request = newRequest(lib.requests.CFindRequest);
  request.setAffectedSopClassUid(model);
  request.setDataset(new JsonDataset(query.identifier, ctx?.getAcceptedTransferSyntaxUid() ?? ""));
  const wanted = query.limit === undefined ? Infinity : query.offset + query.limit;
  const matches: DicomJson[] = [];
  let cancelled = false;
  const final = await assoc.request(request, (res) => {
    if (matches.length >= wanted) return;
    matches.push(lazy ? lazyDatasetJson(res.getDataset()) : datasetJson(res.getDataset()));
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

/**
 * Run a search: one C-FIND, or, for a QIDO-RS search with matching keys above its level, a C-FIND
 * of that level and one below each match (in the upper level's order) until the page is full.
 * `lazy` as runFind's, for a single C-FIND.
 */
export function runSearch(
  assoc: ScuAssociation,
  query: DicomQuery,
  lazy = false,
): Promise<FindResult> {
  const split = query.hierarchical ? splitHierarchical(query) : undefined;
  // One C-FIND: its promise as it is (no extra turns of an async frame).
  return split ? searchLevels(assoc, query, split) : runFind(assoc, query, lazy);
}

/** A search with matching keys above its level: the upper level, then below each match. */
async function searchLevels(
  assoc: ScuAssociation,
  query: DicomQuery,
  split: NonNullable<ReturnType<typeof splitHierarchical>>,
): Promise<FindResult> {
  const parents = await runFind(assoc, split.parents);
  if (statusKind(parents.status) === "failure") return parents;
  const wanted = query.limit === undefined ? Infinity : query.offset + query.limit;
  const matches: DicomJson[] = [];
  for (const parent of parents.matches) {
    if (matches.length >= wanted) break;
    const below = split.below(parent);
    if (wanted !== Infinity) below.limit = wanted - matches.length;
    const found = await runSearch(assoc, below);
    if (statusKind(found.status) === "failure") return found;
    matches.push(...found.matches.map((m) => inheritFrom(m, parent)));
  }
  return { matches: matches.slice(query.offset, wanted), status: STATUS.success };
}
