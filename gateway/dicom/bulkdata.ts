/**
 * Bulk data references of the gateway's DICOM JSON (PS3.18 F.2.6): a binary value too large to
 * inline gets a BulkDataURI `{base}/bulkdata/{study}/{series}/{instance}/{tag path}`, where the
 * tag path is the element's tag, preceded for elements inside sequences by
 * `{sequence tag}/{item index}` pairs (`7FE00010`, `00480105/0/00282000`). The URI names
 * everything needed to retrieve the instance again and find the value in it.
 */
import { binaryBytes, type DcmjsDict } from "./json.ts";

/** What a bulk data path points at. */
export interface BulkDataRef {
  study: string;
  series: string;
  instance: string;
  /** `TAG` or `SEQTAG/index/.../TAG` (tags as 8 upper-case hex digits). */
  tagPath: string;
}

/** Binary VRs whose values bulk data URIs may reference. */
const BINARY_VRS = new Set(["OB", "OW", "OF", "OD", "OL", "OV", "UN"]);
const UID = "[0-9]+(?:\\.[0-9]+)*";
const TAG_PATH = "[0-9A-Fa-f]{8}(?:/[0-9]+/[0-9A-Fa-f]{8})*";
const PATH = new RegExp(`^/bulkdata/(${UID})/(${UID})/(${UID})/(${TAG_PATH})$`);

/** The path (relative to a DICOMweb base) of a bulk data value. */
export function bulkDataPath(ref: BulkDataRef): string {
  return `/bulkdata/${ref.study}/${ref.series}/${ref.instance}/${ref.tagPath}`;
}

/** Parse a relative bulk data path; undefined when it is not one the gateway emits. */
export function parseBulkDataPath(path: string): BulkDataRef | undefined {
  const m = PATH.exec(path);
  if (!m) return undefined;
  return { study: m[1], series: m[2], instance: m[3], tagPath: m[4].toUpperCase() };
}

function entry(dict: DcmjsDict, tag: string) {
  return dict[tag] ?? dict[tag.toLowerCase()];
}

/**
 * The binary value a tag path names in a dataset read by dcmjs; undefined when there is no such
 * element or it is not binary.
 */
export function bulkValue(dict: DcmjsDict, tagPath: string): Uint8Array | undefined {
  const steps = tagPath.toUpperCase().split("/");
  let current: DcmjsDict = dict;
  for (let i = 0; i < steps.length - 1; i += 2) {
    const seq = entry(current, steps[i]);
    const item = seq?.Value?.[Number(steps[i + 1])];
    if (!seq || seq.vr !== "SQ" || typeof item !== "object" || item === null) return undefined;
    current = item as DcmjsDict;
  }
  const el = entry(current, steps[steps.length - 1]);
  if (!el || !BINARY_VRS.has(el.vr) && !["ox", "lt", "na"].includes(el.vr)) return undefined;
  return binaryBytes(el.Value ?? []);
}
