/**
 * Query building shared by the DICOMweb bridge and the dicom_scu backend: QIDO-RS parameters
 * (matching keys by keyword or tag, `includefield`, `limit`, `offset`, `fuzzymatching`) and path
 * UIDs -> a C-FIND identifier (DICOM JSON) at a query/retrieve level, with the QIDO default return
 * keys of PS3.18 for that level.
 */
import { tagOf, vrOf } from "./dictionary.ts";
import type { DicomJson } from "./json.ts";

/** Query/retrieve levels (the IMAGE level serves instances). */
export type QrLevel = "PATIENT" | "STUDY" | "SERIES" | "IMAGE";

/** Return keys of each level when the query names none (PS3.18 10.6.3.3 default attributes). */
export const DEFAULT_RETURN_KEYS: Record<QrLevel, string[]> = {
  PATIENT: ["PatientName", "PatientID", "PatientBirthDate", "PatientSex"],
  STUDY: [
    "StudyDate",
    "StudyTime",
    "AccessionNumber",
    "ModalitiesInStudy",
    "ReferringPhysicianName",
    "PatientName",
    "PatientID",
    "PatientBirthDate",
    "PatientSex",
    "StudyInstanceUID",
    "StudyID",
    "StudyDescription",
    "NumberOfStudyRelatedSeries",
    "NumberOfStudyRelatedInstances",
  ],
  SERIES: [
    "Modality",
    "SeriesDescription",
    "SeriesInstanceUID",
    "SeriesNumber",
    "NumberOfSeriesRelatedInstances",
    "StudyInstanceUID",
  ],
  IMAGE: [
    "SOPClassUID",
    "SOPInstanceUID",
    "InstanceNumber",
    "Rows",
    "Columns",
    "BitsAllocated",
    "NumberOfFrames",
    "SeriesInstanceUID",
    "StudyInstanceUID",
  ],
};

/** A query with the paging and matching options of QIDO-RS. */
export interface DicomQuery {
  level: QrLevel;
  identifier: DicomJson;
  limit?: number;
  offset: number;
  fuzzy: boolean;
  /** `includefield=all`: every attribute the peer returns. */
  includeAll: boolean;
  /** Matching keys of upper levels are matched there first (query_levels.ts): QIDO-RS searches. */
  hierarchical?: boolean;
  /**
   * The information model (C-FIND SOP class) asked for, when the caller named one (a DIMSE
   * C-FIND, e.g. Modality Worklist); absent: patient root for PATIENT, else study root.
   */
  model?: string;
}

/** Parameters that are options, not matching keys. */
const OPTIONS = new Set(["includefield", "limit", "offset", "fuzzymatching", "format"]);

/** An element holding a value parsed from a query string per its VR. */
function matchElement(tag: string, value: string): DicomJson[string] {
  const vr = vrOf(tag);
  if (value === "") return { vr };
  if (vr === "PN") return { vr, Value: [{ Alphabetic: value }] };
  if (["US", "SS", "UL", "SL", "FL", "FD", "IS", "DS"].includes(vr) && !value.includes("\\")) {
    const n = Number(value);
    if (Number.isFinite(n)) return { vr, Value: [n] };
  }
  // A list of UIDs (`uid1,uid2`) is a UID list match (PS3.4 C.2.2.2.2).
  if (vr === "UI") return { vr, Value: value.split(/[,\\]/) };
  return { vr, Value: [value] };
}

/**
 * The default return keys of a search (PS3.18 10.6.3.3): those of the level, plus those of each
 * level above it whose unique key the path leaves open (`/series` also returns study attributes,
 * `/studies/{study}/instances` series attributes, `/instances` both).
 */
export function defaultReturnKeys(
  level: QrLevel,
  uids: { study?: string; series?: string } = {},
): string[] {
  const keys = [...DEFAULT_RETURN_KEYS[level]];
  if (level === "IMAGE" && !uids.series) keys.push(...DEFAULT_RETURN_KEYS.SERIES);
  if ((level === "SERIES" || level === "IMAGE") && !uids.study) {
    keys.push(...DEFAULT_RETURN_KEYS.STUDY);
  }
  return [...new Set(keys)];
}

/** Build a query; throws an Error naming a parameter that is neither a keyword nor a tag. */
export function buildQuery(
  level: QrLevel,
  params: URLSearchParams,
  uids: { study?: string; series?: string; instance?: string } = {},
  base: DicomJson = {},
): DicomQuery {
  const identifier: DicomJson = structuredClone(base);
  const includes = params.getAll("includefield").flatMap((v) => v.split(","));
  const includeAll = includes.includes("all");
  const returnKeys = [...defaultReturnKeys(level, uids), ...includes.filter((k) => k !== "all")];
  for (const key of returnKeys) {
    const tag = tagOf(key);
    if (!tag) throw new Error(`unknown attribute \`${key}\` in includefield`);
    identifier[tag] ??= { vr: vrOf(tag) };
  }
  const fuzzy = params.get("fuzzymatching") === "true";
  for (const [key, raw] of params) {
    if (OPTIONS.has(key.toLowerCase())) continue;
    // Sequence matching (`00081115.0020000E=...`) is not supported; keys are single attributes.
    const tag = tagOf(key);
    if (!tag) throw new Error(`unknown matching key \`${key}\``);
    // Fuzzy matching of person names: a prefix match of each name component (PS3.18 8.3.4.6).
    const value = fuzzy && vrOf(tag) === "PN" && raw !== "" && !/[*?]/.test(raw) ? `${raw}*` : raw;
    identifier[tag] = matchElement(tag, value);
  }
  if (uids.study) identifier["0020000D"] = { vr: "UI", Value: [uids.study] };
  if (uids.series) identifier["0020000E"] = { vr: "UI", Value: [uids.series] };
  if (uids.instance) identifier["00080018"] = { vr: "UI", Value: [uids.instance] };
  // Unique keys of the levels up to the queried one are always returned.
  identifier["0020000D"] ??= { vr: "UI" };
  if (level === "SERIES" || level === "IMAGE") identifier["0020000E"] ??= { vr: "UI" };
  if (level === "IMAGE") identifier["00080018"] ??= { vr: "UI" };
  identifier["00080052"] = { vr: "CS", Value: [level] };
  const limit = intParam(params, "limit");
  const offset = intParam(params, "offset") ?? 0;
  return { level, identifier, limit, offset, fuzzy, includeAll, hierarchical: true };
}

function intParam(params: URLSearchParams, name: string): number | undefined {
  const v = params.get(name);
  if (v === null) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new Error(`\`${name}\` must be a non-negative integer`);
  return n;
}

/** The level of a C-FIND/C-GET/C-MOVE identifier (QueryRetrieveLevel), if valid. */
export function levelOf(identifier: DicomJson): QrLevel | undefined {
  const v = String(identifier["00080052"]?.Value?.[0] ?? "").trim().toUpperCase();
  return v === "PATIENT" || v === "STUDY" || v === "SERIES" || v === "IMAGE" ? v : undefined;
}
