/**
 * Media types: a fast Content-Type parser (called per request), the format table, and charset
 * decoders shared by the text-like codecs.
 */
import { GatewayError } from "../errors.ts";

/** Normalized body formats (`none` is the envelope's word for an empty body). */
export type BodyFormat =
  | "json"
  | "xml"
  | "csv"
  | "form"
  | "multipart"
  | "binary"
  | "text"
  | "hl7"
  | "none";

/** A parsed media type: the lowercased essence and the parameters (names lowercased). */
export interface MediaType {
  /** The essence, e.g. `application/fhir+json`, lowercased. */
  type: string;
  /** Parameters by lowercased name, values as sent (quotes and escapes removed). */
  params: Record<string, string>;
}

/** Media types with an exact entry; the others are classified by suffix and top-level type. */
const EXACT_FORMATS: ReadonlyMap<string, BodyFormat> = new Map<string, BodyFormat>([
  ["application/json", "json"],
  ["application/fhir+json", "json"],
  ["application/dicom+json", "json"],
  ["application/xml", "xml"],
  ["text/xml", "xml"],
  ["application/soap+xml", "xml"],
  ["text/csv", "csv"],
  ["application/x-www-form-urlencoded", "form"],
  ["multipart/form-data", "multipart"],
  ["text/plain", "text"],
  ["x-application/hl7-v2+er7", "hl7"],
  ["application/hl7-v2", "hl7"],
  ["application/pdf", "binary"],
  ["application/octet-stream", "binary"],
]);

const SEMICOLON = 59;
const EQUALS = 61;
const QUOTE = 34;
const BACKSLASH = 92;

/** True for HTTP optional whitespace (space, tab). */
function isOws(c: number): boolean {
  return c === 32 || c === 9;
}

/** The lowercased, trimmed essence of a Content-Type value ("" when there is none). */
export function essenceOf(header: string): string {
  const semi = header.indexOf(";");
  const raw = semi < 0 ? header : header.slice(0, semi);
  return raw.trim().toLowerCase();
}

/**
 * Parse a Content-Type header value: `type/subtype; name=value; name="quoted \"value\""`.
 * Parameter names are lowercased, values kept as sent (a boundary is case-sensitive); the first
 * occurrence of a repeated parameter wins. Returns null for a missing or empty header.
 */
export function parseMediaType(header: string | null | undefined): MediaType | null {
  if (!header) return null;
  const semi = header.indexOf(";");
  const type = (semi < 0 ? header : header.slice(0, semi)).trim().toLowerCase();
  if (type === "") return null;
  const params: Record<string, string> = {};
  if (semi >= 0) parseParams(header, semi + 1, params);
  return { type, params };
}

/** Parse `; name=value` pairs starting at `i` into `out` (one pass, no regular expressions). */
function parseParams(s: string, i: number, out: Record<string, string>): void {
  const n = s.length;
  while (i < n) {
    // Skip separators and whitespace before a name.
    let c = s.charCodeAt(i);
    if (c === SEMICOLON || isOws(c)) {
      i++;
      continue;
    }
    const nameStart = i;
    while (i < n) {
      c = s.charCodeAt(i);
      if (c === EQUALS || c === SEMICOLON) break;
      i++;
    }
    const name = s.slice(nameStart, i).trim().toLowerCase();
    if (i >= n || c === SEMICOLON) continue; // a name without a value is ignored
    i++; // '='
    while (i < n && isOws(s.charCodeAt(i))) i++;
    let value: string;
    if (i < n && s.charCodeAt(i) === QUOTE) {
      // quoted-string with backslash escapes (RFC 9110 §5.6.4)
      i++;
      let chunkStart = i;
      value = "";
      while (i < n) {
        c = s.charCodeAt(i);
        if (c === QUOTE) break;
        if (c === BACKSLASH && i + 1 < n) {
          value += s.slice(chunkStart, i);
          chunkStart = i + 1;
          i += 2;
          continue;
        }
        i++;
      }
      value += s.slice(chunkStart, i);
      i++; // closing quote (or past the end when unterminated)
      while (i < n && s.charCodeAt(i) !== SEMICOLON) i++;
    } else {
      const valueStart = i;
      while (i < n && s.charCodeAt(i) !== SEMICOLON) i++;
      value = s.slice(valueStart, i).trim();
    }
    if (name !== "" && name !== "__proto__" && !Object.hasOwn(out, name)) out[name] = value;
  }
}

/** The format of a lowercased media type essence. */
export function formatOfType(type: string): BodyFormat {
  const exact = EXACT_FORMATS.get(type);
  if (exact !== undefined) return exact;
  // image/svg+xml and friends are media first: checked before the +json/+xml suffixes.
  if (type.startsWith("image/") || type.startsWith("video/") || type.startsWith("audio/")) {
    return "binary";
  }
  if (type.endsWith("+json")) return "json";
  if (type.endsWith("+xml")) return "xml";
  if (type.startsWith("text/")) return "text";
  return "binary";
}

/** The format of a Content-Type header value; a missing or empty one means JSON. */
export function formatOfHeader(header: string | null | undefined): BodyFormat {
  if (!header) return "json";
  const type = essenceOf(header);
  return type === "" ? "json" : formatOfType(type);
}

const UTF8_DECODER = new TextDecoder();
/** Decoders by charset label as sent; only labels the platform knows are cached (bounded). */
const DECODERS = new Map<string, TextDecoder>();
const MAX_CACHED_DECODERS = 256;

/**
 * The (non-fatal, BOM-stripping) decoder for a charset label; UTF-8 when no label is given.
 * An unknown label is a 415 `unsupported_charset`.
 */
export function decoderFor(charset: string | undefined): TextDecoder {
  if (charset === undefined) return UTF8_DECODER;
  const cached = DECODERS.get(charset);
  if (cached !== undefined) return cached;
  const label = charset.trim().toLowerCase();
  let decoder: TextDecoder;
  if (label === "utf-8" || label === "utf8") {
    decoder = UTF8_DECODER;
  } else {
    try {
      decoder = new TextDecoder(label);
    } catch {
      throw new GatewayError(
        415,
        "unsupported_charset",
        `unsupported charset ${JSON.stringify(charset)}`,
      );
    }
    if (decoder.encoding === "utf-8") decoder = UTF8_DECODER;
  }
  if (DECODERS.size < MAX_CACHED_DECODERS) DECODERS.set(charset, decoder);
  return decoder;
}

/** Decode bytes as text in the given charset (UTF-8 by default). */
export function decodeText(bytes: Uint8Array, charset: string | undefined): string {
  return decoderFor(charset).decode(bytes);
}

/** True when a charset label names UTF-8 (or is absent). */
export function isUtf8Charset(charset: string | undefined): boolean {
  if (charset === undefined) return true;
  const label = charset.trim().toLowerCase();
  return label === "utf-8" || label === "utf8";
}

/** Characters that force a parameter value to be quoted when a media type is written. */
const NEEDS_QUOTES = /[^!#$%&'*+.^_`|~0-9A-Za-z-]/;

/**
 * The Content-Type to send with bytes we encoded (always UTF-8): the header as given, unless it
 * declares another charset, which is then replaced by `utf-8` (other parameters kept).
 */
export function withUtf8Charset(header: string, mt: MediaType): string {
  const charset = mt.params.charset;
  if (charset === undefined || isUtf8Charset(charset)) return header;
  let out = mt.type;
  for (const name in mt.params) {
    const value = name === "charset" ? "utf-8" : mt.params[name];
    out += `; ${name}=${
      NEEDS_QUOTES.test(value) || value === ""
        ? `"${value.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`
        : value
    }`;
  }
  return out;
}
