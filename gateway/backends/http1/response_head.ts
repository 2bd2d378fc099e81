/**
 * Parsing HTTP/1.1 response heads from bytes: one string for the whole head, fields cut out of it
 * by index, common field names shared instead of allocated, hop-by-hop fields consumed here.
 */

import { Http1Error } from "./errors.ts";

const decoder = new TextDecoder();

// RFC 9112 reason-phrase: HTAB, SP, VCHAR, obs-text (what the Response constructor accepts).
const REASON = /^[\t\x20-\x7e\x80-\xff]*$/;
const DIGITS = /^\d{1,15}$/;
const LF = 10;
const CR = 13;
const SP = 32;
const HTAB = 9;
/** `tchar` of RFC 9110 §5.6.2, by char code. */
const TCHAR = new Uint8Array(128);
for (const c of "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") {
  TCHAR[c.charCodeAt(0)] = 1;
}

/** Connection-level fields (RFC 9110 §7.6.1): consumed here, never handed on. */
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
]);

/** Field names most responses carry, lower-case: matched in place, so they cost no string. */
const COMMON_NAMES = [
  "accept-ranges",
  "access-control-allow-origin",
  "age",
  "cache-control",
  "connection",
  "content-disposition",
  "content-encoding",
  "content-language",
  "content-length",
  "content-location",
  "content-type",
  "date",
  "etag",
  "expires",
  "keep-alive",
  "last-modified",
  "link",
  "location",
  "pragma",
  "retry-after",
  "server",
  "set-cookie",
  "strict-transport-security",
  "transfer-encoding",
  "vary",
  "via",
  "www-authenticate",
  "x-content-type-options",
  "x-frame-options",
  "x-request-id",
];
const NAMES_BY_LENGTH: string[][] = [];
for (const name of COMMON_NAMES) (NAMES_BY_LENGTH[name.length] ??= []).push(name);

/** A parsed response head. */
export interface ResponseHead {
  status: number;
  statusText: string;
  /** 0 for HTTP/1.0, 1 for HTTP/1.1 (and later 1.x). */
  minor: number;
  /**
   * End-to-end fields, names lower-case and values without surrounding whitespace, alternating
   * in order, duplicates kept. Hop-by-hop fields, and those the `Connection` field names, are
   * left out: the client frames the body and manages the connection itself.
   */
  fields: string[];
  /** -1 when absent. */
  contentLength: number;
  /** The last transfer-coding named, lower-cased, or null when there is no transfer-encoding. */
  transferCoding: string | null;
  /** The connection is not reusable after this response. */
  close: boolean;
}

/**
 * Index just past the blank line that ends a head in `buf[from, end)`, or -1 when the head is
 * incomplete. Lines end with CRLF (a bare LF is accepted, as RFC 9112 §2.2 allows).
 */
export function findHeadEnd(buf: Uint8Array, from: number, end: number): number {
  let i = from;
  while (i < end) {
    const lf = buf.indexOf(LF, i);
    if (lf === -1 || lf >= end) return -1;
    const next = lf + 1;
    if (next < end && buf[next] === LF) return next + 1;
    if (next + 1 < end && buf[next] === CR && buf[next + 1] === LF) return next + 2;
    i = next;
  }
  return -1;
}

/** Decodes head bytes as latin-1 (fields are byte strings); ASCII takes the fast native path. */
function decodeHead(buf: Uint8Array, start: number, end: number): string {
  let ascii = true;
  for (let i = start; i < end; i++) {
    if (buf[i] > 0x7f) {
      ascii = false;
      break;
    }
  }
  if (ascii) return decoder.decode(buf.subarray(start, end));
  let text = "";
  for (let i = start; i < end; i += 4096) {
    text += String.fromCharCode(...buf.subarray(i, Math.min(i + 4096, end)));
  }
  return text;
}

function protocolError(message: string): Http1Error {
  return new Http1Error(message, "protocol");
}

function invalidStatusLine(text: string, end: number): Http1Error {
  return protocolError(`invalid status line ${JSON.stringify(text.slice(0, Math.min(end, 64)))}`);
}

/**
 * The lower-case field name `text[start, end)`: a shared string when it is a common one, else a
 * new one; null when it is not a token.
 */
function fieldName(text: string, start: number, end: number): string | null {
  const length = end - start;
  const candidates = NAMES_BY_LENGTH[length];
  if (candidates !== undefined) {
    next: for (const name of candidates) {
      for (let i = 0; i < length; i++) {
        const c = text.charCodeAt(start + i);
        const k = name.charCodeAt(i);
        // k is a lower-case letter, a digit or "-": an exact match or the upper-case letter.
        if (c !== k && !(k >= 97 && c === k - 32)) continue next;
      }
      return name;
    }
  }
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c >= 128 || TCHAR[c] === 0) return null;
  }
  return text.slice(start, end).toLowerCase();
}

/** Parses the response head in `buf[start, end)` (`end` from {@link findHeadEnd}). */
export function parseResponseHead(buf: Uint8Array, start: number, end: number): ResponseHead {
  const text = decodeHead(buf, start, end);
  let lineEnd = text.indexOf("\n");
  const statusEnd = text.charCodeAt(lineEnd - 1) === CR ? lineEnd - 1 : lineEnd;
  if (
    !text.startsWith("HTTP/1.") || text.charCodeAt(8) !== SP ||
    (statusEnd > 12 && text.charCodeAt(12) !== SP) || statusEnd < 12
  ) {
    throw invalidStatusLine(text, statusEnd);
  }
  const minor = text.charCodeAt(7) - 48;
  const d1 = text.charCodeAt(9) - 48;
  const d2 = text.charCodeAt(10) - 48;
  const d3 = text.charCodeAt(11) - 48;
  if (
    minor < 0 || minor > 9 || !(d1 >= 1 && d1 <= 9) || !(d2 >= 0 && d2 <= 9) ||
    !(d3 >= 0 && d3 <= 9)
  ) {
    throw invalidStatusLine(text, statusEnd);
  }
  const status = d1 * 100 + d2 * 10 + d3;
  const statusText = statusEnd <= 13
    ? ""
    : statusEnd === 15 && text.startsWith("OK", 13)
    ? "OK"
    : text.slice(13, statusEnd);
  if (!REASON.test(statusText)) throw protocolError("invalid reason phrase in the status line");

  const fields: string[] = [];
  let contentLength = -1;
  let transferCoding: string | null = null;
  let connectionClose = false;
  let keepAlive = false;
  // Names the Connection field lists besides close and keep-alive (rare): left out at the end.
  let named: string[] | null = null;
  for (;;) {
    const lineStart = lineEnd + 1;
    lineEnd = text.indexOf("\n", lineStart);
    const stop = text.charCodeAt(lineEnd - 1) === CR ? lineEnd - 1 : lineEnd;
    if (stop <= lineStart) break;
    const first = text.charCodeAt(lineStart);
    if (first === SP || first === HTAB) {
      throw protocolError("obsolete line folding in the response head");
    }
    const colon = text.indexOf(":", lineStart);
    if (colon <= lineStart || colon >= stop) {
      throw protocolError(
        `malformed header line ${
          JSON.stringify(text.slice(lineStart, Math.min(stop, lineStart + 64)))
        }`,
      );
    }
    const name = fieldName(text, lineStart, colon);
    if (name === null) {
      throw protocolError(`invalid header name ${JSON.stringify(text.slice(lineStart, colon))}`);
    }
    // The value without optional whitespace (SP, HTAB) around it.
    let from = colon + 1;
    let to = stop;
    while (from < to && (text.charCodeAt(from) === SP || text.charCodeAt(from) === HTAB)) from++;
    while (to > from && (text.charCodeAt(to - 1) === SP || text.charCodeAt(to - 1) === HTAB)) to--;
    for (let i = from; i < to; i++) {
      const c = text.charCodeAt(i);
      if (c === CR || c === 0) throw protocolError(`invalid value of header ${name}`);
    }
    const value = from === to ? "" : text.slice(from, to);
    if (name === "content-length") {
      const length = parseLength(value, "content-length", "protocol");
      if (contentLength !== -1 && contentLength !== length) {
        throw protocolError("conflicting content-length headers");
      }
      contentLength = length;
    } else if (HOP_BY_HOP.has(name)) {
      if (name === "transfer-encoding") {
        const codings = value.toLowerCase().split(",");
        transferCoding = codings[codings.length - 1].trim();
      } else if (name === "connection") {
        for (const part of value.toLowerCase().split(",")) {
          const token = part.trim();
          if (token === "close") connectionClose = true;
          else if (token === "keep-alive") keepAlive = true;
          else if (token !== "") (named ??= []).push(token);
        }
      }
      continue;
    }
    fields.push(name, value);
  }
  // HTTP/1.0 closes unless it asked to keep alive; a length with a transfer-encoding may be a
  // smuggling attempt (RFC 9112 §6.1), so that connection is not reused either.
  const close = connectionClose || (minor === 0 && !keepAlive) ||
    (transferCoding !== null && contentLength !== -1);
  return {
    status,
    statusText,
    minor,
    fields: named === null ? fields : without(fields, named),
    contentLength,
    transferCoding,
    close,
  };
}

/** `fields` without those named in `names`. */
function without(fields: string[], names: string[]): string[] {
  const kept: string[] = [];
  for (let i = 0; i < fields.length; i += 2) {
    if (!names.includes(fields[i])) kept.push(fields[i], fields[i + 1]);
  }
  return kept;
}

/** Parses a content-length value (a list of identical values is accepted, RFC 9110 §8.6). */
export function parseLength(
  value: string,
  what: string,
  code: "protocol" | "invalid_request",
): number {
  if (!value.includes(",")) {
    // The usual single value: no list to build.
    if (DIGITS.test(value)) return Number(value);
    throw new Http1Error(`invalid ${what} ${JSON.stringify(value.slice(0, 64))}`, code);
  }
  const parts = value.split(",").map((part) => part.trim());
  for (const part of parts) {
    if (part !== parts[0] || !DIGITS.test(part)) {
      throw new Http1Error(`invalid ${what} ${JSON.stringify(value.slice(0, 64))}`, code);
    }
  }
  const length = Number(parts[0]);
  if (!Number.isSafeInteger(length)) {
    throw new Http1Error(`invalid ${what} ${JSON.stringify(value.slice(0, 64))}`, code);
  }
  return length;
}

/** True when the comma-separated `value` contains `token` (case-insensitive). */
export function hasToken(value: string, token: string): boolean {
  const lower = value.toLowerCase();
  if (!lower.includes(token)) return false;
  return lower.split(",").some((part) => part.trim() === token);
}
