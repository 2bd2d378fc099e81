/**
 * Searches whose matching keys belong to a level above the one searched (`/instances?PatientID=…`,
 * `/studies/{study}/instances?Modality=CT`), answered by a PACS that matches hierarchically: PS3.4
 * C.4.1.2.2.1 lets a C-FIND carry only the unique keys of the levels above its own, and a PACS
 * ignores other keys there (DCMTK `dcmqrscp` returns every instance). Such a search becomes a
 * search of that upper level, then one search below each of its matches.
 */
import { tagOf } from "./dictionary.ts";
import type { DicomJson } from "./json.ts";
import type { DicomQuery, QrLevel } from "./query.ts";

/** Attributes of the Study Root model's study level (PS3.4 C.6.2.1.2, patient ones included). */
const STUDY_KEYWORDS = [
  "StudyDate",
  "StudyTime",
  "AccessionNumber",
  "IssuerOfAccessionNumberSequence",
  "StudyID",
  "StudyInstanceUID",
  "ModalitiesInStudy",
  "SOPClassesInStudy",
  "AnatomicRegionsInStudyCodeSequence",
  "ReferringPhysicianName",
  "StudyDescription",
  "ProcedureCodeSequence",
  "NameOfPhysiciansReadingStudy",
  "AdmittingDiagnosesDescription",
  "ReferencedStudySequence",
  "ReferencedPatientSequence",
  "NumberOfStudyRelatedSeries",
  "NumberOfStudyRelatedInstances",
  "OtherStudyNumbers",
  "PatientAge",
  "PatientSize",
  "PatientWeight",
  "Occupation",
  "AdditionalPatientHistory",
  "PatientName",
  "PatientID",
  "IssuerOfPatientID",
  "OtherPatientIDsSequence",
  "OtherPatientNames",
  "PatientBirthDate",
  "PatientBirthTime",
  "PatientSex",
  "EthnicGroup",
  "PatientComments",
  "NumberOfPatientRelatedStudies",
  "NumberOfPatientRelatedSeries",
  "NumberOfPatientRelatedInstances",
];

/** Attributes of the series level (PS3.4 C.6.2.1.3). */
const SERIES_KEYWORDS = [
  "Modality",
  "SeriesNumber",
  "SeriesInstanceUID",
  "SeriesDescription",
  "SeriesDate",
  "SeriesTime",
  "BodyPartExamined",
  "Laterality",
  "ProtocolName",
  "OperatorsName",
  "PerformingPhysicianName",
  "PerformedProcedureStepStartDate",
  "PerformedProcedureStepStartTime",
  "RequestAttributesSequence",
  "NumberOfSeriesRelatedInstances",
];

const LEVEL_OF = new Map<string, "STUDY" | "SERIES">([
  ...STUDY_KEYWORDS.map((k) => [tagOf(k)!, "STUDY"] as const),
  ...SERIES_KEYWORDS.map((k) => [tagOf(k)!, "SERIES"] as const),
]);

/** The unique key of each level above the instance. */
const UNIQUE: Record<"STUDY" | "SERIES", string> = { STUDY: "0020000D", SERIES: "0020000E" };
const ORDER: QrLevel[] = ["PATIENT", "STUDY", "SERIES", "IMAGE"];

/** The level of an attribute in the Study Root model; undefined: the instance level or unknown. */
export function attributeLevel(tag: string): "STUDY" | "SERIES" | undefined {
  return LEVEL_OF.get(tag.toUpperCase());
}

/** True when the element matches something (a universal match has no value, or only empty ones). */
function matches(el: DicomJson[string]): boolean {
  return (el.Value ?? []).some((v) =>
    v !== null && v !== "" && !(typeof v === "object" &&
      Object.values(v as Record<string, unknown>).every((c) => c === "" || c === undefined))
  );
}

/** A single UID without wildcards: the one form of an upper key a hierarchical search allows. */
function singleUid(el: DicomJson[string]): boolean {
  const v = el.Value ?? [];
  return v.length === 1 && typeof v[0] === "string" && /^[0-9.]+$/.test(v[0]);
}

/** A search split at an upper level: that level's search, then one below each of its matches. */
export interface HierarchicalSplit {
  /** The search of the upper level: the matching and return keys of that level and above. */
  parents: DicomQuery;
  /** The original search below one parent match: its unique keys set, its level's keys open. */
  below(parent: DicomJson): DicomQuery;
}

/**
 * How to answer `query` hierarchically, or undefined when it carries no matching key above its
 * level but single unique keys (then one C-FIND answers it). The split is at the highest such
 * level; the search below a parent may split again (study keys, then series keys).
 */
export function splitHierarchical(query: DicomQuery): HierarchicalSplit | undefined {
  const depth = ORDER.indexOf(query.level);
  let upper: "STUDY" | "SERIES" | undefined;
  for (const [tag, el] of Object.entries(query.identifier)) {
    const level = attributeLevel(tag);
    if (!level || ORDER.indexOf(level) >= depth || !matches(el)) continue;
    if (tag === UNIQUE[level] && singleUid(el)) continue;
    if (level === "STUDY" || upper === undefined) upper = level;
  }
  if (!upper) return undefined;
  const top = ORDER.indexOf(upper);
  const atOrAbove = (tag: string) => {
    const level = attributeLevel(tag);
    return level !== undefined && ORDER.indexOf(level) <= top;
  };
  const identifier: DicomJson = {};
  for (const [tag, el] of Object.entries(query.identifier)) {
    if (atOrAbove(tag)) identifier[tag] = structuredClone(el);
  }
  identifier[UNIQUE[upper]] ??= { vr: "UI" };
  identifier["00080052"] = { vr: "CS", Value: [upper] };
  const parents: DicomQuery = {
    level: upper,
    identifier,
    offset: 0,
    fuzzy: query.fuzzy,
    includeAll: false,
    hierarchical: false,
  };
  const below = (parent: DicomJson): DicomQuery => {
    const child: DicomJson = structuredClone(query.identifier);
    // The parent's keys were matched by the upper search: below it they are return keys only.
    for (const tag of Object.keys(child)) {
      if (atOrAbove(tag)) child[tag] = { vr: child[tag].vr };
    }
    for (const level of ["STUDY", "SERIES"] as const) {
      const uid = parent[UNIQUE[level]]?.Value?.[0];
      if (ORDER.indexOf(level) <= top && typeof uid === "string") {
        child[UNIQUE[level]] = { vr: "UI", Value: [uid] };
      }
    }
    return { ...query, identifier: child, offset: 0, limit: undefined };
  };
  return { parents, below };
}

/** A match below a parent, completed with the parent's attributes it lacks (upper levels). */
export function inheritFrom(match: DicomJson, parent: DicomJson): DicomJson {
  const out: DicomJson = { ...match };
  for (const [tag, el] of Object.entries(parent)) {
    if (tag === "00080052" || !attributeLevel(tag)) continue;
    if (!out[tag] || (!out[tag].Value?.length && el.Value?.length)) out[tag] = el;
  }
  return out;
}
