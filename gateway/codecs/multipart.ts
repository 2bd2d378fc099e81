/**
 * Multipart codec (multipart/form-data) with @mjackson/multipart-parser, entirely in memory.
 *
 * Result: `{ fields: { name: value | value[] }, files: [{ field, filename, content_type, size,
 * sha256 }] }`. File contents are hashed and dropped: never written anywhere, never in the data
 * (the envelope keeps the original bytes for forwarding).
 *
 * - A part is a file when its Content-Disposition has a `filename` (even an empty one) or its
 *   Content-Type is application/octet-stream; every other part is a field.
 * - Field values are decoded as UTF-8; a repeated field name gives an array, like forms.
 * - A file part without Content-Type is `text/plain` (RFC 7578 §4.4).
 * - A preamble before the first boundary is skipped (RFC 2046); the epilogue is ignored.
 * - Limits: more than `max_multipart_files` files is 413 `too_many_files`; more than
 *   `max_form_fields` fields is 413 `too_many_form_fields` (exactly at a limit passes).
 * - Missing or invalid boundary, a part without a name, a truncated body, a part header over
 *   8 KiB: 400 `invalid_multipart`.
 */
import { MultipartParseError, parseMultipart } from "@mjackson/multipart-parser";
import { GatewayError } from "../errors.ts";
import { decodeText } from "./media_type.ts";
import { sha256Hex } from "./binary.ts";
import { addValue, type FormFields } from "./form.ts";

/** Metadata of one uploaded file. */
export interface MultipartFile {
  /** The form field name of the part. */
  field: string;
  /** The file name sent by the client (`filename*` preferred; may be empty). */
  filename: string;
  /** The part's media type (`text/plain` when the part has none). */
  content_type: string;
  /** Size of the file content in bytes. */
  size: number;
  /** Lowercase hex SHA-256 of the file content. */
  sha256: string;
}

/** Decoded multipart/form-data. */
export interface MultipartData {
  /** Non-file parts by name; a repeated name gives an array. */
  fields: FormFields;
  /** File parts in body order. */
  files: MultipartFile[];
}

/** Limits that apply to a multipart body. */
export interface MultipartLimits {
  /** Most file parts accepted. */
  max_multipart_files: number;
  /** Most field (non-file) parts accepted. */
  max_form_fields: number;
}

/** A 400 `invalid_multipart` error. */
function invalid(reason: string): GatewayError {
  return new GatewayError(400, "invalid_multipart", `malformed multipart body: ${reason}`);
}

/** Boundary characters allowed by RFC 2046 §5.1.1 (1 to 70 of them, not ending in a space). */
const BOUNDARY = /^[0-9A-Za-z'()+_,\-./:=? ]{0,69}[0-9A-Za-z'()+_,\-./:=?]$/;

/** Index of `needle` in `haystack` from `from`, or -1. */
function indexOfBytes(haystack: Uint8Array, needle: Uint8Array, from: number): number {
  const first = needle[0];
  const last = haystack.length - needle.length;
  for (
    let i = haystack.indexOf(first, from);
    i >= 0 && i <= last;
    i = haystack.indexOf(first, i + 1)
  ) {
    let k = 1;
    while (k < needle.length && haystack[i + k] === needle[k]) k++;
    if (k === needle.length) return i;
  }
  return -1;
}

const ENCODER = new TextEncoder();

/** The body from its first boundary line on (skipping a preamble), or null when there is none. */
function fromFirstBoundary(bytes: Uint8Array, boundary: string): Uint8Array | null {
  const dashBoundary = ENCODER.encode(`--${boundary}`);
  let k = 0;
  while (k < dashBoundary.length && bytes[k] === dashBoundary[k]) k++;
  if (k === dashBoundary.length) return bytes;
  const delimiter = new Uint8Array(dashBoundary.length + 2);
  delimiter[0] = 13;
  delimiter[1] = 10;
  delimiter.set(dashBoundary, 2);
  const at = indexOfBytes(bytes, delimiter, 0);
  return at < 0 ? null : bytes.subarray(at + 2);
}

/** One part of a multipart body: its header fields and its bytes. */
export interface MultipartPart {
  headers: Headers;
  body: Uint8Array;
}

/**
 * The parts of a multipart body of any subtype (`multipart/related` for DICOMweb), in order, with
 * @mjackson/multipart-parser. A part's bytes are a view into `bytes` where the parser kept it in
 * one piece. Throws an Error naming the problem for a body without its boundary or a truncated one.
 */
export function multipartParts(bytes: Uint8Array, boundary: string): MultipartPart[] {
  const body = fromFirstBoundary(bytes, boundary);
  if (body === null) throw new Error("multipart body does not contain its boundary");
  // RFC 2046 allows a part without header fields; the parser does not, and DICOMweb requires each
  // part's Content-Type (PS3.18 8.6.1.2): say so rather than "stream not finished".
  if (indexOfBytes(body, ENCODER.encode(`--${boundary}\r\n\r\n`), 0) >= 0) {
    throw new Error("malformed multipart body: a part has no header fields (no Content-Type)");
  }
  const parts: MultipartPart[] = [];
  try {
    for (const part of parseMultipart(body, { boundary, maxFileSize: Infinity })) {
      const content = part.content.length === 1 ? part.content[0] : part.bytes;
      parts.push({ headers: new Headers(part.headers), body: content });
    }
  } catch (e) {
    if (e instanceof MultipartParseError) {
      throw new Error(`malformed multipart body: ${e.message}`, { cause: e });
    }
    throw e;
  }
  return parts;
}

/**
 * Parse a multipart/form-data body (see the top of this file); `boundary` is the Content-Type's
 * boundary parameter. An empty body has no fields and no files.
 */
export async function decodeMultipart(
  bytes: Uint8Array,
  boundary: string | undefined,
  limits: MultipartLimits,
): Promise<MultipartData> {
  if (boundary === undefined || boundary === "") throw invalid("missing boundary parameter");
  if (!BOUNDARY.test(boundary)) throw invalid("invalid boundary parameter");
  const fields: FormFields = {};
  const files: MultipartFile[] = [];
  if (bytes.byteLength === 0) return { fields, files };
  const body = fromFirstBoundary(bytes, boundary);
  if (body === null) throw invalid("no boundary line found");
  const digests: Promise<string>[] = [];
  let fieldCount = 0;
  try {
    // The whole body is already bounded by max_body_size: no smaller per-file cap here.
    for (const part of parseMultipart(body, { boundary, maxFileSize: Infinity })) {
      const name = part.name;
      if (name === undefined) throw invalid("a part has no Content-Disposition name");
      // One chunk is the usual case (a single write): hash and decode it in place, no copy.
      const content = part.content.length === 1 ? part.content[0] : part.bytes;
      if (part.isFile) {
        if (files.length + 1 > limits.max_multipart_files) {
          throw new GatewayError(
            413,
            "too_many_files",
            `multipart body has more than max_multipart_files of ${limits.max_multipart_files} files`,
          );
        }
        files.push({
          field: name,
          filename: part.filename ?? "",
          content_type: part.mediaType ?? "text/plain",
          size: content.byteLength,
          sha256: "",
        });
        digests.push(sha256Hex(content));
      } else {
        if (++fieldCount > limits.max_form_fields) {
          throw new GatewayError(
            413,
            "too_many_form_fields",
            `multipart body has more than max_form_fields of ${limits.max_form_fields} fields`,
          );
        }
        addValue(fields, name, decodeText(content, undefined), false);
      }
    }
  } catch (e) {
    if (e instanceof GatewayError) throw e;
    if (e instanceof MultipartParseError) throw invalid(e.message);
    // Part headers that are not valid UTF-8 or cannot be parsed.
    throw invalid(e instanceof Error ? e.message : String(e));
  }
  const hashes = await Promise.all(digests);
  for (let i = 0; i < files.length; i++) files[i].sha256 = hashes[i];
  return { fields, files };
}
