/**
 * XML codec: application/xml, text/xml, application/soap+xml and every other `+xml` type.
 *
 * Decoding runs in two steps:
 * 1. `scanXml`, one cheap pass with `indexOf` and char codes, no regular expressions. It rejects
 *    DTD markup (`<!DOCTYPE`, `<!ENTITY`, `<!ELEMENT`, `<!ATTLIST`, `<!NOTATION`) anywhere outside
 *    comments and CDATA with 400 `xml_dtd_forbidden`, so external entities (XXE) and entity
 *    expansion (billion laughs) cannot reach the parser. It counts element nesting (the root
 *    element is depth 1, a self-closing element counts too): a depth of `max_xml_depth` passes,
 *    one more is 413 `xml_too_deep`; more than `max_xml_attributes` attributes on one element is
 *    413 `too_many_xml_attributes`, more than `max_xml_references` entity and character references
 *    in the document 413 `too_many_xml_references`. It checks well-formedness: start and end tags
 *    match and are closed, exactly one root element and no text outside it, attributes are
 *    `name="value"` with quotes and no `<` inside, every `&` starts one of the predefined entities
 *    or a valid character reference (without a DTD no other entity exists), comments, CDATA
 *    sections and processing instructions are closed; else 400 `invalid_xml` with the reason and
 *    the line.
 * 2. fast-xml-parser turns the document into JSON: attributes prefixed `@`, the text of an element
 *    that also has attributes or children under `#text`, repeated elements as arrays, every value
 *    a string (no number parsing: `00123` stays `"00123"`), XML declaration and processing
 *    instructions dropped, whitespace around values trimmed.
 *
 * Entities: only XML's five predefined entities (`&lt;` `&gt;` `&amp;` `&quot;` `&apos;`) and
 * numeric character references (`&#65;` `&#x41;`) are decoded, by our own decoder given to the
 * parser; it ignores entities a DTD would declare, and HTML entities are off. (The parser's
 * `processEntities` flag stays on only so that this decoder runs: with it off, `&amp;` would reach
 * the data verbatim and be escaped again to `&amp;amp;` on the way back.) CDATA is kept verbatim.
 */
import { XMLBuilder, XMLParser } from "fast-xml-parser";
import { causedError, GatewayError } from "../errors.ts";
import { decoderFor } from "./media_type.ts";

const LT = 60; // <
const GT = 62; // >
const SLASH = 47; // /
const BANG = 33; // !
const QUESTION = 63; // ?
const DQUOTE = 34;
const SQUOTE = 39;
const EQUALS = 61;

/** Most attributes one element may have when no limit is given (see `max_xml_attributes`). */
export const DEFAULT_MAX_XML_ATTRIBUTES = 256;

/** Most references one document may have when no limit is given (see `max_xml_references`). */
export const DEFAULT_MAX_XML_REFERENCES = 100_000;

/** DTD keywords that may follow `<!` (matched case-insensitively: rejected either way). */
const DTD_KEYWORDS = ["doctype", "entity", "element", "attlist", "notation"];

/** The 1-based line of `pos` in `text` (computed only when reporting an error). */
function lineOf(text: string, pos: number): number {
  let line = 1;
  for (let i = text.indexOf("\n"); i >= 0 && i < pos; i = text.indexOf("\n", i + 1)) line++;
  return line;
}

/** A 400 `invalid_xml` error pointing at the line of `pos`. */
function invalid(text: string, pos: number, reason: string): GatewayError {
  return new GatewayError(
    400,
    "invalid_xml",
    `malformed XML body: ${reason} (line ${lineOf(text, pos)})`,
  );
}

/** True for XML whitespace (space, tab, CR, LF). */
function isXmlSpace(c: number): boolean {
  return c === 32 || c === 10 || c === 13 || c === 9;
}

/** True when the characters in [from, to) are all whitespace. */
function onlySpace(text: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (!isXmlSpace(text.charCodeAt(i))) return false;
  return true;
}

/** True when `text` at `pos` starts with `word` ignoring ASCII case (word is lowercase). */
function startsWithWord(text: string, pos: number, word: string): boolean {
  if (pos + word.length > text.length) return false;
  for (let i = 0; i < word.length; i++) {
    if ((text.charCodeAt(pos + i) | 0x20) !== word.charCodeAt(i)) return false;
  }
  return true;
}

/**
 * The pre-scan of step 1 (see the top of this file): DTD markup, depth, attributes, references
 * and structure. Throws 400 `xml_dtd_forbidden`, 413 `xml_too_deep`, 413
 * `too_many_xml_attributes`, 413 `too_many_xml_references` or 400 `invalid_xml`.
 */
export function scanXml(
  text: string,
  maxDepth: number,
  maxAttributes = DEFAULT_MAX_XML_ATTRIBUTES,
  maxReferences = DEFAULT_MAX_XML_REFERENCES,
): void {
  const n = text.length;
  // The next '<' at or after the current attribute value (positions only move forward): a '<'
  // inside a value is refused, and searching from each value to the document's end again would
  // cost the square of the attributes (200,000 attributes held the event loop for 3 s).
  let nextLt = -1;
  const ltAfter = (from: number): number => {
    if (nextLt !== n && nextLt < from) {
      nextLt = text.indexOf("<", from);
      if (nextLt < 0) nextLt = n;
    }
    return nextLt;
  };
  // Open elements: where each name starts and how long it is (names are compared in place).
  const nameStarts: number[] = [];
  const nameLengths: number[] = [];
  let depth = 0;
  let roots = 0;
  let i = 0;
  // The next '&' at or after the last checked position: ranges are checked in document order,
  // so this only moves forward (one linear pass over the '&'s in total).
  let amp = text.indexOf("&");
  let references = 0;
  /**
   * Check every '&' in [from, to) starts a predefined entity or a character reference, and count
   * them: each one costs the parser and the decoder a step, so their number is bounded like the
   * attributes (a million of them in 3.5 MB took 1.2 s).
   */
  const checkReferences = (from: number, to: number): void => {
    if (amp >= 0 && amp < from) amp = text.indexOf("&", from);
    while (amp >= 0 && amp < to) {
      if (++references > maxReferences) {
        throw new GatewayError(
          413,
          "too_many_xml_references",
          `XML body has more than max_xml_references (${maxReferences}) entity and character ` +
            `references (line ${lineOf(text, amp)})`,
        );
      }
      const end = referenceEnd(text, amp, to);
      if (end < 0) {
        const semi = text.indexOf(";", amp);
        const shown = semi > amp && semi - amp <= 32 ? text.slice(amp, semi + 1) : "&";
        throw invalid(text, amp, `invalid or undeclared entity reference ${shown}`);
      }
      amp = text.indexOf("&", end);
    }
  };
  while (true) {
    const lt = text.indexOf("<", i);
    const textEnd = lt < 0 ? n : lt;
    if (depth === 0) {
      if (!onlySpace(text, i, textEnd)) throw invalid(text, i, "text outside the root element");
    } else {
      checkReferences(i, textEnd);
    }
    if (lt < 0) break;
    const c = text.charCodeAt(lt + 1);
    if (c === BANG) {
      if (text.startsWith("--", lt + 2)) {
        const end = text.indexOf("-->", lt + 4);
        if (end < 0) throw invalid(text, lt, "comment is not closed");
        i = end + 3;
        continue;
      }
      if (text.startsWith("[CDATA[", lt + 2)) {
        if (depth === 0) throw invalid(text, lt, "CDATA outside the root element");
        const end = text.indexOf("]]>", lt + 9);
        if (end < 0) throw invalid(text, lt, "CDATA section is not closed");
        i = end + 3;
        continue;
      }
      for (const word of DTD_KEYWORDS) {
        if (startsWithWord(text, lt + 2, word)) {
          throw new GatewayError(
            400,
            "xml_dtd_forbidden",
            `XML document type declarations and entity declarations are not accepted (<!${word.toUpperCase()} on line ${
              lineOf(text, lt)
            })`,
          );
        }
      }
      throw invalid(text, lt, "unexpected '<!'");
    }
    if (c === QUESTION) {
      const end = text.indexOf("?>", lt + 2);
      if (end < 0) throw invalid(text, lt, "processing instruction is not closed");
      i = end + 2;
      continue;
    }
    if (c === SLASH) {
      // End tag: must name the innermost open element.
      const nameStart = lt + 2;
      let j = nameStart;
      while (j < n) {
        const d = text.charCodeAt(j);
        if (d === GT || d === LT || isXmlSpace(d)) break;
        j++;
      }
      if (depth === 0) {
        throw invalid(text, lt, `unexpected end tag </${text.slice(nameStart, j)}>`);
      }
      const openStart = nameStarts[depth - 1];
      const openLength = nameLengths[depth - 1];
      let same = j - nameStart === openLength;
      for (let k = 0; same && k < openLength; k++) {
        same = text.charCodeAt(nameStart + k) === text.charCodeAt(openStart + k);
      }
      if (!same) {
        throw invalid(
          text,
          lt,
          `expected </${text.slice(openStart, openStart + openLength)}> but found </${
            text.slice(nameStart, j)
          }>`,
        );
      }
      while (j < n && isXmlSpace(text.charCodeAt(j))) j++;
      if (j >= n || text.charCodeAt(j) !== GT) throw invalid(text, lt, "end tag is not closed");
      depth--;
      i = j + 1;
      continue;
    }
    // Start tag or empty-element tag: name, then (space name = "value")*, then '/>' or '>'.
    const nameStart = lt + 1;
    let k = nameStart;
    while (k < n && !isNameEnd(text.charCodeAt(k))) k++;
    const nameLength = k - nameStart;
    if (nameLength === 0) throw invalid(text, lt, "'<' not followed by a tag name");
    let selfClosing = false;
    let attributes = 0;
    while (true) {
      const spaceStart = k;
      while (k < n && isXmlSpace(text.charCodeAt(k))) k++;
      if (k >= n) {
        throw invalid(
          text,
          lt,
          `tag <${text.slice(nameStart, nameStart + nameLength)}> is not closed`,
        );
      }
      const d = text.charCodeAt(k);
      if (d === GT) break;
      if (d === SLASH) {
        if (text.charCodeAt(k + 1) !== GT) throw invalid(text, k, "'/' not followed by '>'");
        selfClosing = true;
        k++;
        break;
      }
      if (k === spaceStart) throw invalid(text, k, "missing whitespace before an attribute");
      if (++attributes > maxAttributes) {
        throw new GatewayError(
          413,
          "too_many_xml_attributes",
          `an element has more than max_xml_attributes (${maxAttributes}) attributes ` +
            `(line ${lineOf(text, lt)})`,
        );
      }
      const attrStart = k;
      while (k < n && !isNameEnd(text.charCodeAt(k)) && text.charCodeAt(k) !== EQUALS) k++;
      const attr = text.slice(attrStart, k);
      if (attr === "") throw invalid(text, k, "invalid character in a tag");
      while (k < n && isXmlSpace(text.charCodeAt(k))) k++;
      if (text.charCodeAt(k) !== EQUALS) throw invalid(text, k, `attribute ${attr} has no value`);
      k++;
      while (k < n && isXmlSpace(text.charCodeAt(k))) k++;
      const q = text.charCodeAt(k);
      if (q !== DQUOTE && q !== SQUOTE) {
        throw invalid(text, k, `value of attribute ${attr} is not quoted`);
      }
      const close = text.indexOf(q === DQUOTE ? '"' : "'", k + 1);
      if (close < 0) throw invalid(text, k, `value of attribute ${attr} is not closed`);
      const lt2 = ltAfter(k + 1);
      if (lt2 < close) {
        throw invalid(text, lt2, `'<' in the value of attribute ${attr}`);
      }
      checkReferences(k + 1, close);
      k = close + 1;
    }
    if (depth === 0 && roots++ > 0) throw invalid(text, lt, "more than one root element");
    if (depth + 1 > maxDepth) {
      throw new GatewayError(
        413,
        "xml_too_deep",
        `XML nesting depth exceeds max_xml_depth of ${maxDepth} (line ${lineOf(text, lt)})`,
      );
    }
    if (!selfClosing) {
      nameStarts[depth] = nameStart;
      nameLengths[depth] = nameLength;
      depth++;
    }
    i = k + 1;
  }
  if (depth > 0) {
    const start = nameStarts[depth - 1];
    throw invalid(
      text,
      start,
      `element <${text.slice(start, start + nameLengths[depth - 1])}> is not closed`,
    );
  }
  if (roots === 0) throw invalid(text, 0, "no root element");
}

/** True for a character that ends a tag or attribute name. */
function isNameEnd(c: number): boolean {
  return c === GT || c === SLASH || c === LT || c === DQUOTE || c === SQUOTE || isXmlSpace(c);
}

/** The code point of the reference `referenceEnd` last accepted (no allocation per reference). */
let referenceCode = 0;

/**
 * The index after a valid reference starting at `amp` (`&lt;` `&gt;` `&amp;` `&quot;` `&apos;`,
 * `&#digits;`, `&#xhex;` with at most 8 digits naming an XML character) that ends before `limit`,
 * or -1; its code point is left in `referenceCode`. Without a DTD no other entity exists.
 */
function referenceEnd(text: string, amp: number, limit: number): number {
  let k = amp + 1;
  if (text.charCodeAt(k) === 35 /* # */) {
    k++;
    const hex = (text.charCodeAt(k) | 0x20) === 120; /* x */
    if (hex) k++;
    const digitsStart = k;
    let code = 0;
    // At most 9 digits are read: a 9th makes the reference invalid either way.
    while (k < limit && k - digitsStart <= 8) {
      const c = text.charCodeAt(k);
      if (c >= 48 && c <= 57) code = code * (hex ? 16 : 10) + (c - 48);
      else if (hex && (c | 0x20) >= 97 && (c | 0x20) <= 102) code = code * 16 + (c | 0x20) - 87;
      else break;
      k++;
    }
    if (k === digitsStart || k - digitsStart > 8 || k >= limit || text.charCodeAt(k) !== 59) {
      return -1;
    }
    if (!isXmlChar(code)) return -1;
    referenceCode = code;
    return k + 1;
  }
  for (let p = 0; p < PREDEFINED_NAMES.length; p++) {
    const name = PREDEFINED_NAMES[p];
    if (text.startsWith(name, k) && k + name.length <= limit) {
      referenceCode = PREDEFINED_CODES[p];
      return k + name.length;
    }
  }
  return -1;
}

/** True for a code point XML allows in a document (the Char production of XML 1.0). */
function isXmlChar(code: number): boolean {
  return code === 0x9 || code === 0xa || code === 0xd || (code >= 0x20 && code <= 0xd7ff) ||
    (code >= 0xe000 && code <= 0xfffd) || (code >= 0x10000 && code <= 0x10ffff);
}

/** Predefined entity names with their ';'. */
const PREDEFINED_NAMES = ["lt;", "gt;", "amp;", "quot;", "apos;"];
/** The characters of PREDEFINED_NAMES, in the same order: < > & " '. */
const PREDEFINED_CODES = [60, 62, 38, 34, 39];

/**
 * Decode the predefined XML entities and character references of a value; anything else after
 * an `&` stays as it is. One pass over the value: each reference is read by its char codes, with
 * no regular expression and no callback per match (a million references took 0.4 s that way).
 */
export function decodeXmlEntities(value: string): string {
  let amp = value.indexOf("&");
  if (amp < 0) return value;
  const n = value.length;
  let out = "";
  let from = 0;
  while (amp >= 0) {
    const end = referenceEnd(value, amp, n);
    if (end < 0) {
      amp = value.indexOf("&", amp + 1);
      continue;
    }
    out += value.slice(from, amp) + String.fromCodePoint(referenceCode);
    from = end;
    amp = value.indexOf("&", end);
  }
  return out + value.slice(from);
}

/**
 * The entity decoder handed to fast-xml-parser: predefined entities and character references
 * only; entities from a DTD or given by the caller are ignored (never expanded).
 */
const ENTITY_DECODER = {
  setExternalEntities(_entities: Record<string, string>): void {},
  addInputEntities(_entities: Record<string, string>): void {},
  reset(): void {},
  setXmlVersion(_version: number): void {},
  decode: decodeXmlEntities,
};

/** One parser for every request: `parse` keeps no state between documents. */
const PARSER = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: "@",
  textNodeName: "#text",
  parseTagValue: false,
  parseAttributeValue: false,
  processEntities: true,
  htmlEntities: false,
  entityDecoder: ENTITY_DECODER,
  ignoreDeclaration: true,
  ignorePiTags: true,
  allowBooleanAttributes: false,
  // Depth is enforced by scanXml with the configured limit.
  maxNestedTags: Number.MAX_SAFE_INTEGER,
  // No path-based callbacks are used: skip building a path string for every node.
  jPath: false,
});

/** The XML builder for re-encoding, with the same conventions as the parser. */
const BUILDER = new XMLBuilder({
  ignoreAttributes: false,
  attributeNamePrefix: "@",
  textNodeName: "#text",
  suppressBooleanAttributes: false,
  suppressEmptyNode: false,
  processEntities: true,
  format: false,
  maxNestedTags: Number.MAX_SAFE_INTEGER,
});

/** The charset named by an XML declaration (`<?xml ... encoding="x"?>`), if any. */
const DECLARED_ENCODING = /^<\?xml[^>]*?\sencoding\s*=\s*["']([A-Za-z0-9._:-]+)["']/;

/**
 * The charset to decode an XML body with: the Content-Type's charset; else a UTF-16 byte order
 * mark; else the encoding of the XML declaration; else UTF-8.
 */
export function xmlCharset(bytes: Uint8Array, charset: string | undefined): string | undefined {
  if (charset !== undefined) return charset;
  if (bytes.length >= 2) {
    if (bytes[0] === 0xfe && bytes[1] === 0xff) return "utf-16be";
    if (bytes[0] === 0xff && bytes[1] === 0xfe) return "utf-16le";
  }
  // "<?xml"
  if (
    bytes.length > 5 && bytes[0] === 0x3c && bytes[1] === 0x3f && bytes[2] === 0x78 &&
    bytes[3] === 0x6d && bytes[4] === 0x6c
  ) {
    const head = String.fromCharCode(...bytes.subarray(0, Math.min(bytes.length, 200)));
    const m = DECLARED_ENCODING.exec(head);
    if (m) return m[1];
  }
  return undefined;
}

/**
 * Parse an XML body into JSON (see the top of this file). An empty body is `null`.
 * Throws 400 `xml_dtd_forbidden`, 413 `xml_too_deep`, 413 `too_many_xml_attributes`, 413
 * `too_many_xml_references`, 400 `invalid_xml`, 415 `unsupported_charset`.
 */
export function decodeXml(
  bytes: Uint8Array,
  charset: string | undefined,
  maxDepth: number,
  maxAttributes = DEFAULT_MAX_XML_ATTRIBUTES,
  maxReferences = DEFAULT_MAX_XML_REFERENCES,
): unknown {
  if (bytes.byteLength === 0) return null;
  const text = decoderFor(xmlCharset(bytes, charset)).decode(bytes);
  scanXml(text, maxDepth, maxAttributes, maxReferences);
  try {
    return PARSER.parse(text);
  } catch (e) {
    throw causedError(400, "invalid_xml", `malformed XML body: ${(e as Error).message}`, e);
  }
}

/** A simplified XML Name: a letter, `_` or `:` first, then letters, digits, `_`, `:`, `.`, `-`. */
const XML_NAME = /^[\p{L}_:][\p{L}\p{N}_:.\-\u00B7]*$/u;

/** True when a value (below an element) has a shape the builder writes as well-formed XML. */
function fitsElement(value: unknown, depth: number): boolean {
  if (depth > 10_000) return false;
  if (value === null || typeof value !== "object") {
    return value === null || typeof value === "string" || typeof value === "number" ||
      typeof value === "boolean";
  }
  if (Array.isArray(value)) {
    for (const item of value) {
      if (Array.isArray(item) || !fitsElement(item, depth + 1)) return false;
    }
    return true;
  }
  for (const key in value) {
    const child = (value as Record<string, unknown>)[key];
    if (key === "#text") {
      if (child !== null && typeof child === "object") return false;
    } else if (key.charCodeAt(0) === 64 /* @ */) {
      if (!XML_NAME.test(key.slice(1)) || (child !== null && typeof child === "object")) {
        return false;
      }
    } else if (!XML_NAME.test(key) || !fitsElement(child, depth + 1)) {
      return false;
    }
  }
  return true;
}

/**
 * Encode JSON data back to XML with the decoding conventions, or null when the data has no XML
 * shape: it must be an object with exactly one key, a valid element name (the root), whose value
 * is not an array; below it, keys are element names, `@attribute` names or `#text`.
 */
export function encodeXml(data: unknown): string | null {
  if (data === null || typeof data !== "object" || Array.isArray(data)) return null;
  const keys = Object.keys(data);
  if (keys.length !== 1) return null;
  const root = keys[0];
  const value = (data as Record<string, unknown>)[root];
  if (!XML_NAME.test(root) || Array.isArray(value) || !fitsElement(value, 1)) return null;
  return BUILDER.build(data);
}
