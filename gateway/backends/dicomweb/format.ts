/**
 * DICOMweb request formatting from DIMSE-shaped envelopes: a C-FIND identifier becomes a QIDO-RS
 * query (path by level, matching keys as `tag=value`, empty keys as `includefield`), a C-GET or
 * C-MOVE identifier a WADO-RS retrieval path, a C-STORE body a STOW-RS multipart/related upload.
 */
import { GatewayError } from "../../errors.ts";
import {
  type DicomJson,
  encodeMultipart,
  jsonString,
  levelOf,
  newBoundary,
  relatedContentType,
} from "../../dicom/mod.ts";

/** Tags that place a query in the path rather than in parameters. */
const PATH_TAGS = ["0020000D", "0020000E"];

function single(json: DicomJson, tag: string): string | undefined {
  const values = json[tag]?.Value ?? [];
  return values.length === 1 && typeof values[0] === "string" && !/[*?]/.test(values[0])
    ? values[0]
    : undefined;
}

function paramValue(el: DicomJson[string]): string | undefined {
  const values = (el.Value ?? []).filter((v) => v !== null && v !== undefined);
  if (values.length === 0) return undefined;
  return values.map((v) =>
    typeof v === "object" ? (v as { Alphabetic?: string }).Alphabetic ?? "" : String(v)
  ).join(",");
}

/** QIDO-RS path and query for a C-FIND identifier. */
export function qidoRequest(identifier: DicomJson): { path: string; query: URLSearchParams } {
  const level = levelOf(identifier) ?? "STUDY";
  const study = single(identifier, "0020000D");
  const series = single(identifier, "0020000E");
  let path = "/studies";
  const inPath = new Set<string>();
  if (level === "SERIES") {
    if (study) {
      path = `/studies/${study}/series`;
      inPath.add("0020000D");
    } else path = "/series";
  } else if (level === "IMAGE") {
    if (study && series) {
      path = `/studies/${study}/series/${series}/instances`;
      PATH_TAGS.forEach((t) => inPath.add(t));
    } else if (study) {
      path = `/studies/${study}/instances`;
      inPath.add("0020000D");
    } else path = "/instances";
  }
  const query = new URLSearchParams();
  for (const [tag, el] of Object.entries(identifier)) {
    if (tag === "00080052" || inPath.has(tag) || tag.startsWith("0000")) continue;
    const value = paramValue(el);
    if (value === undefined) query.append("includefield", tag);
    else query.append(tag, value);
  }
  return { path, query };
}

/** WADO-RS path of the instances an identifier names; throws when its UIDs are missing. */
export function wadoPath(identifier: DicomJson): string {
  const level = levelOf(identifier) ?? "STUDY";
  const study = jsonString(identifier, "0020000D");
  const series = jsonString(identifier, "0020000E");
  const instance = jsonString(identifier, "00080018");
  if (!study) {
    throw new GatewayError(
      400,
      "invalid_dicom_request",
      "a DICOMweb retrieval needs StudyInstanceUID",
    );
  }
  if (level === "STUDY" || level === "PATIENT") return `/studies/${study}`;
  if (!series) {
    throw new GatewayError(
      400,
      "invalid_dicom_request",
      "a series retrieval needs SeriesInstanceUID",
    );
  }
  if (level === "SERIES") return `/studies/${study}/series/${series}`;
  if (!instance) {
    throw new GatewayError(
      400,
      "invalid_dicom_request",
      "an instance retrieval needs SOPInstanceUID",
    );
  }
  return `/studies/${study}/series/${series}/instances/${instance}`;
}

/** A STOW-RS body for Part 10 files. */
export function stowBody(files: Uint8Array[]): { body: Uint8Array; contentType: string } {
  const boundary = newBoundary();
  return {
    body: encodeMultipart(
      files.map((f) => ({ contentType: "application/dicom", body: f })),
      boundary,
    ),
    contentType: relatedContentType(boundary),
  };
}
