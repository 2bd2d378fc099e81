/**
 * HL7 v2 bodies (the HTTP bridge): `x-application/hl7-v2+er7`, `application/hl7-v2`, and
 * `text/plain` whose text starts with an MSH (or FHS/BHS) segment, decoded by the HL7 codec into
 * its JSON (hl7/json.ts), and that JSON written back as ER7.
 */
import { GatewayError } from "../errors.ts";
import { decodeText } from "./media_type.ts";
import {
  DEFAULT_HL7_LIMITS,
  formatHl7,
  Hl7Error,
  type Hl7Header,
  type Hl7Json,
  looksLikeHl7Json,
  parseHl7,
  readFirstHl7Header,
} from "./hl7/mod.ts";

/** Media types whose body is ER7 (beside `text/plain` that starts with a header segment). */
export const HL7_MEDIA_TYPES: readonly string[] = [
  "x-application/hl7-v2+er7",
  "application/hl7-v2",
  "text/plain",
];

/** Hl7Error codes that are about size: 413, the others 400 `invalid_hl7`. */
const TOO_LARGE = new Set([
  "too_large",
  "too_many_segments",
  "too_many_fields",
  "too_many_repetitions",
  "too_many_components",
]);

/** The GatewayError of a refused HL7 text. */
export function hl7GatewayError(err: Hl7Error): GatewayError {
  const where = err.segment ? ` (${err.segment}${err.field ? `-${err.field}` : ""})` : "";
  if (TOO_LARGE.has(err.code)) {
    return new GatewayError(413, `hl7_${err.code}`, `HL7 v2 message: ${err.message}${where}`);
  }
  return new GatewayError(400, "invalid_hl7", `invalid HL7 v2 message: ${err.message}${where}`);
}

/** True when a text starts (after a BOM and blank space) with an MSH, FHS or BHS segment. */
export function startsWithHl7(text: string): boolean {
  const m = /^[\uFEFF\s]*(MSH|FHS|BHS)([^A-Za-z0-9\s])/.exec(text.slice(0, 64));
  return m !== null;
}

/** Parse an ER7 text into the codec's JSON; refusals are GatewayErrors (400/413). */
export function decodeHl7Text(text: string, maxBytes: number): Hl7Json {
  try {
    return parseHl7(text, { ...DEFAULT_HL7_LIMITS, maxBytes });
  } catch (err) {
    if (err instanceof Hl7Error) throw hl7GatewayError(err);
    throw err;
  }
}

/** Decode an ER7 body in its charset (UTF-8 by default). */
export function decodeHl7(
  bytes: Uint8Array,
  charset: string | undefined,
  maxBytes: number,
): Hl7Json {
  return decodeHl7Text(decodeText(bytes, charset), maxBytes);
}

/** The ER7 text of data that has the codec's JSON shape, or null (then it is sent as JSON). */
export function encodeHl7(data: unknown): string | null {
  if (!looksLikeHl7Json(data)) return null;
  try {
    return formatHl7(data);
  } catch (err) {
    if (err instanceof Hl7Error) return null;
    throw err;
  }
}

/** The part of a body read for its header: the MSH, or a batch's first MSH (1 MiB at most). */
const HEADER_BYTES = 1024 * 1024;

/**
 * The header of an HL7 body, for the routing metadata: null when the body is not HL7 (a
 * `text/plain` text that does not start with MSH, FHS or BHS); a 400 `invalid_hl7` when it is
 * declared HL7 (or starts like it) and its header cannot be read.
 */
export function hl7HeaderOfBody(
  bytes: Uint8Array,
  essence: string,
  charset: string | undefined,
): Hl7Header | null {
  const text = decodeText(bytes.subarray(0, HEADER_BYTES), charset);
  if (essence === "text/plain" && !startsWithHl7(text)) return null;
  try {
    return readFirstHl7Header(text);
  } catch (err) {
    if (err instanceof Hl7Error) throw hl7GatewayError(err);
    throw err;
  }
}
