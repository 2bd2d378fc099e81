/**
 * Body codecs: bytes of a content type <-> normalized JSON data.
 *
 * CONTRACT (used by gateway/envelope.ts):
 * - parseMediaType(header) -> { type (lowercased essence), params } | null
 * - formatOf(contentType) -> BodyFormat (a missing Content-Type means JSON)
 * - decodeBody(bytes, contentType, limits) -> normalized data; throws GatewayError (400/413/415)
 * - encodeData(data, contentType) -> { bytes, contentType } used when a middleware changed data
 *
 * FORMATS (media type essence, lowercased, parameters ignored):
 * - json: application/json, application/fhir+json, application/dicom+json, any other `+json`,
 *   and a missing Content-Type. Data: the parsed value (`null` for an empty body).
 * - xml: application/xml, text/xml, application/soap+xml, any other `+xml` (except image/*, so
 *   image/svg+xml is binary). Data: JSON with `@attr`, `#text`, arrays for repeated elements,
 *   string values. DTDs are refused (xml.ts).
 * - csv: text/csv. Data: `[{ column: value }]`, formula cells escaped with `'` (csv.ts).
 * - form: application/x-www-form-urlencoded. Data: `{ name: value | value[] }` (form.ts).
 * - multipart: multipart/form-data. Data: `{ fields, files: [{ field, filename, content_type,
 *   size, sha256 }] }` (multipart.ts). Other multipart/* types are binary.
 * - hl7: x-application/hl7-v2+er7 and application/hl7-v2, and text/plain whose text starts with an
 *   MSH, FHS or BHS segment (the HTTP bridge). Data: the HL7 codec's JSON (hl7/mod.ts,
 *   docs/hl7.md): `{ segments: { PID: [{ "5": [{ "1": "Doe" }] }] }, order, terminator }`.
 * - text: text/plain (not HL7) and every other text/* type. Data: the decoded string.
 * - binary: image/*, video/*, audio/*, application/pdf, application/octet-stream and anything
 *   else. Data: `{ content_type, size, sha256 }` (hex SHA-256); the envelope keeps the bytes.
 * The `charset` parameter is honoured for json, xml, csv, form and text (UTF-8 when absent; for
 * XML a byte order mark or the XML declaration may name it); an unknown one is 415.
 *
 * ENCODING RULES (encodeData, after a middleware replaced the data; output is always UTF-8, so a
 * Content-Type declaring another charset gets `charset=utf-8` instead):
 * - json content types (and a missing one): JSON; the content type is kept (missing ->
 *   application/json).
 * - xml content types: XML built with the decoding conventions, content type kept, when the data
 *   is an object with a single root key whose value is not an array and whose keys are XML names,
 *   `@attributes` or `#text`; otherwise JSON.
 * - text/csv: CSV (header = union of the rows' keys in first-seen order, RFC 4180 quoting, CRLF),
 *   content type kept, when the data is an array of objects with string/number/boolean/null
 *   values; otherwise JSON.
 * - hl7 content types, and text/plain: ER7 (HL7 v2), content type kept, when the data has the HL7
 *   codec's JSON shape (`segments` with an MSH, or `batches`) and a valid ER7 form; otherwise
 *   JSON (e.g. after a transform to FHIR).
 * - text content types: the string as is when the data is a string; otherwise JSON.
 * - form, multipart, binary, and every fallback above: JSON with `application/json`.
 *
 * ERRORS (GatewayError status / code):
 * - 400 invalid_json, invalid_xml, xml_dtd_forbidden, invalid_csv, invalid_multipart
 * - 413 xml_too_deep, too_many_xml_attributes, too_many_xml_references, too_many_csv_rows,
 *   too_many_csv_columns, csv_cell_too_large, too_many_form_fields, too_many_files
 * - 400 invalid_hl7 (no MSH, bad delimiters or segment names, a broken batch)
 * - 413 hl7_too_large, hl7_too_many_segments, hl7_too_many_fields, hl7_too_many_repetitions,
 *   hl7_too_many_components (the HL7 codec's default limits; the whole body within max_body_size)
 * - 415 unsupported_charset
 * - 500 unserializable_data (encodeData: the data has no JSON form, e.g. a BigInt or a cycle)
 *
 * @example
 * ```ts
 * import { decodeBody, encodeData } from "./mod.ts";
 * import { DEFAULT_CONTENT_LIMITS } from "../../shared/gateway_config/mod.ts";
 *
 * const csv = new TextEncoder().encode("id,name\n1,Ada\n");
 * const rows = await decodeBody(csv, "text/csv", DEFAULT_CONTENT_LIMITS);
 * console.log(rows); // [ { id: "1", name: "Ada" } ]
 * const { bytes, contentType } = encodeData(rows, "text/csv");
 * console.log(contentType, new TextDecoder().decode(bytes));
 * ```
 *
 * @module
 */
import type { ContentLimits } from "../../shared/gateway_config/mod.ts";
import {
  type BodyFormat,
  decodeText,
  formatOfHeader,
  formatOfType,
  isUtf8Charset,
  type MediaType,
  parseMediaType,
  withUtf8Charset,
} from "./media_type.ts";
import { decodeJson, encodeJsonText } from "./json.ts";
import { decodeXml, encodeXml } from "./xml.ts";
import { decodeCsv, encodeCsv } from "./csv.ts";
import { decodeForm } from "./form.ts";
import { decodeMultipart } from "./multipart.ts";
import { describeBinary } from "./binary.ts";
import { decodeTextBody } from "./text.ts";
import { decodeHl7, decodeHl7Text, encodeHl7, startsWithHl7 } from "./hl7_body.ts";

export type { BodyFormat, MediaType } from "./media_type.ts";
export type { BinaryMeta } from "./binary.ts";
export type { FormFields } from "./form.ts";
export type { MultipartData, MultipartFile, MultipartPart } from "./multipart.ts";
export { multipartParts } from "./multipart.ts";
export { decodeJson };
export {
  type AckCode,
  type AckOptions,
  buildAck,
  DEFAULT_DELIMITERS,
  DEFAULT_HL7_LIMITS,
  escapeHl7,
  formatHl7,
  HL7_METADATA_KEYS,
  type Hl7Batch,
  type Hl7BatchGroup,
  type Hl7Delimiters,
  Hl7Error,
  type Hl7ErrorCode,
  type Hl7ErrorDetail,
  type Hl7Header,
  type Hl7Json,
  type Hl7Leaf,
  type Hl7Limits,
  hl7Limits,
  type Hl7Message,
  hl7Metadata,
  type Hl7Repetition,
  type Hl7Segment,
  type Hl7Terminator,
  hl7Timestamp,
  isHl7Batch,
  looksLikeHl7Json,
  newControlId,
  parseHl7,
  type ReadAck,
  readAck,
  readFirstHl7Header,
  readHl7Header,
  unescapeHl7,
} from "./hl7/mod.ts";
export { HL7_MEDIA_TYPES, hl7GatewayError, hl7HeaderOfBody, startsWithHl7 } from "./hl7_body.ts";

/** Parse a Content-Type header value (null when missing or empty). */
export { parseMediaType };

/** The normalized format of a content type (a missing Content-Type means JSON). */
export function formatOf(contentType: string | null): BodyFormat {
  return formatOfHeader(contentType);
}

/** Parse bytes into normalized data by the codec of the content type. */
export async function decodeBody(
  bytes: Uint8Array,
  contentType: string | null,
  limits: ContentLimits,
): Promise<unknown> {
  const mt = parseMediaType(contentType);
  if (mt === null) return decodeJson(bytes, undefined, limits.max_json_depth);
  const charset = mt.params.charset;
  switch (formatOfType(mt.type)) {
    case "json":
      return decodeJson(bytes, charset, limits.max_json_depth);
    case "xml":
      return decodeXml(
        bytes,
        charset,
        limits.max_xml_depth,
        limits.max_xml_attributes,
        limits.max_xml_references,
      );
    case "csv":
      return await decodeCsv(bytes, charset, limits);
    case "form":
      return await decodeForm(decodeText(bytes, charset), limits.max_form_fields);
    case "multipart":
      return await decodeMultipart(bytes, mt.params.boundary, limits);
    case "hl7":
      return decodeHl7(bytes, charset, limits.max_body_size);
    case "text": {
      const text = decodeTextBody(bytes, charset);
      return mt.type === "text/plain" && startsWithHl7(text)
        ? decodeHl7Text(text, limits.max_body_size)
        : text;
    }
    default:
      return await describeBinary(bytes, mt.type);
  }
}

const ENCODER = new TextEncoder();

/** Encoded bytes with their content type. */
function encoded(text: string, contentType: string): { bytes: Uint8Array; contentType: string } {
  return { bytes: ENCODER.encode(text), contentType };
}

/**
 * The Content-Type under which a JSON body of this content type can be replaced by other UTF-8
 * JSON bytes, with no parse in between (what encodeData would send for JSON data); null when the
 * body is not UTF-8 JSON.
 */
export function utf8JsonContentType(contentType: string | null): string | null {
  // Requests of one client repeat one Content-Type: the last answer is kept.
  if (contentType === lastContentType) return lastUtf8JsonType;
  const mt = parseMediaType(contentType);
  let type: string | null;
  if (mt === null) type = "application/json";
  else if (formatOfType(mt.type) !== "json" || !isUtf8Charset(mt.params.charset)) type = null;
  else type = withUtf8Charset(contentType!, mt);
  lastContentType = contentType;
  lastUtf8JsonType = type;
  return type;
}

let lastContentType: string | null | undefined = undefined;
let lastUtf8JsonType: string | null = null;

/** Serialize normalized data for forwarding (rules at the top of this file). */
export function encodeData(
  data: unknown,
  contentType: string | null,
): { bytes: Uint8Array; contentType: string } {
  const mt: MediaType | null = parseMediaType(contentType);
  if (mt === null) return encoded(encodeJsonText(data), "application/json");
  switch (formatOfType(mt.type)) {
    case "json":
      return encoded(encodeJsonText(data), withUtf8Charset(contentType!, mt));
    case "xml": {
      const xml = encodeXml(data);
      if (xml !== null) return encoded(xml, withUtf8Charset(contentType!, mt));
      break;
    }
    case "csv": {
      const csv = encodeCsv(data);
      if (csv !== null) return encoded(csv, withUtf8Charset(contentType!, mt));
      break;
    }
    case "hl7": {
      const er7 = encodeHl7(data);
      if (er7 !== null) return encoded(er7, withUtf8Charset(contentType!, mt));
      break;
    }
    case "text": {
      if (typeof data === "string") return encoded(data, withUtf8Charset(contentType!, mt));
      const er7 = mt.type === "text/plain" ? encodeHl7(data) : null;
      if (er7 !== null) return encoded(er7, withUtf8Charset(contentType!, mt));
      break;
    }
  }
  return encoded(encodeJsonText(data), "application/json");
}
