/**
 * Instances carried by a body: one Part 10 file (`application/dicom`), several in a
 * `multipart/related` body (STOW-RS, WADO-RS), or DICOM JSON (`application/dicom+json`, one
 * dataset or an array; encoded as Explicit VR Little Endian, inline binary included).
 */
import { decodeJson } from "../codecs/mod.ts";
import { type DicomJson, fromDicomJson, jsonString, readDataset, writeDataset } from "./json.ts";
import { MAX_SEQUENCE_DEPTH } from "./nesting.ts";
import { boundaryOf, decodeMultipart } from "./multipart.ts";
import { isP10, type P10File, parseP10 } from "./p10.ts";
import { TS } from "./uids.ts";

/** An instance encoded from DICOM JSON. */
export function instanceFromJson(json: DicomJson): P10File {
  const sopClassUid = jsonString(json, "00080016");
  const sopInstanceUid = jsonString(json, "00080018");
  if (!sopClassUid || !sopInstanceUid) {
    throw new Error(
      "a DICOM JSON instance needs SOPClassUID (00080016) and SOPInstanceUID (00080018)",
    );
  }
  return {
    meta: { transferSyntax: TS.explicitLE, sopClassUid, sopInstanceUid },
    dataset: writeDataset(fromDicomJson(json), TS.explicitLE),
  };
}

/**
 * JSON nesting of DICOM JSON with {@link MAX_SEQUENCE_DEPTH} sequences: four levels each (the
 * element, its `Value` array, the item), and the array of instances around them.
 */
const DICOM_JSON_DEPTH = 4 * MAX_SEQUENCE_DEPTH + 4;

/**
 * The instances of a body; throws an Error saying what is wrong with it. A multipart body's parts
 * are instances (a multipart part holding another multipart body is refused: each level would be
 * read again, and nothing sends one).
 */
export function instancesOfBody(
  bytes: Uint8Array,
  contentType: string | null,
  inMultipart = false,
): P10File[] {
  const type = (contentType ?? "").split(";")[0].trim().toLowerCase();
  if (type.startsWith("multipart/")) {
    if (inMultipart) throw new Error("a multipart part holds another multipart body");
    const boundary = boundaryOf(contentType);
    if (!boundary) throw new Error("multipart body without a boundary parameter");
    return decodeMultipart(bytes, boundary).flatMap((p) =>
      instancesOfBody(p.body, p.headers.get("content-type") ?? "application/dicom", true)
    );
  }
  if (type === "application/dicom+json" || type === "application/json") {
    // Depth checked before anything recurses into it (fromDicomJson, dcmjs's writer).
    const data = decodeJson(bytes, undefined, DICOM_JSON_DEPTH) as DicomJson | DicomJson[];
    return (Array.isArray(data) ? data : [data]).map(instanceFromJson);
  }
  if (isP10(bytes)) return [parseP10(bytes)];
  throw new Error(`no DICOM instance in a body of type ${type || "(none)"}`);
}

/**
 * The study and series an instance belongs to, read from the dataset's header (the elements up to
 * SeriesInstanceUID (0020,000E), never the pixel data); undefined where the dataset lacks them.
 */
export function studyAndSeriesOf(f: P10File): { study?: string; series?: string } {
  if (f.meta.transferSyntax === TS.deflatedLE) return {};
  const dict = readDataset(f.dataset, f.meta.transferSyntax, "0020000E", true);
  const value = (tag: string) => {
    const v = dict[tag]?.Value?.[0];
    return typeof v === "string" && v.trim() ? v.trim() : undefined;
  };
  return { study: value("0020000D"), series: value("0020000E") };
}
