/**
 * Parsing HTTP/1.1 response heads from bytes: no string for the head or its lines, common field
 * names shared instead of allocated and their values reused while they repeat, hop-by-hop
 * fields consumed here.
 */

import { Http1Error } from "./errors.ts";

const decoder = new TextDecoder();

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
/** Indexes into COMMON_NAMES by name length. */
const NAMES_BY_LENGTH: number[][] = [];
COMMON_NAMES.forEach((name, index) => (NAMES_BY_LENGTH[name.length] ??= []).push(index));

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

/** `buf[start, end)` as latin-1 (fields are byte strings); ASCII takes the fast native path. */
function latin1(buf: Uint8Array, start: number, end: number): string {
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

/** `buf[start, end)` quoted for a message, at most 64 bytes of it. */
function quoted(buf: Uint8Array, start: number, end: number): string {
  return JSON.stringify(latin1(buf, start, Math.min(end, start + 64)));
}

/** Index in COMMON_NAMES of the field name `buf[start, end)` (any case), or -1. */
function commonName(buf: Uint8Array, start: number, end: number): number {
  const candidates = NAMES_BY_LENGTH[end - start];
  if (candidates === undefined) return -1;
  next: for (const index of candidates) {
    const name = COMMON_NAMES[index];
    for (let i = 0; i < name.length; i++) {
      const c = buf[start + i];
      const k = name.charCodeAt(i);
      // k is a lower-case letter, a digit or "-": an exact match or the upper-case letter.
      if (c !== k && !(k >= 97 && c === k - 32)) continue next;
    }
    return index;
  }
  return -1;
}

/**
 * The last value seen of each common field, by its index: most answers repeat their server,
 * content type and length, and their date for a second, so the string of the previous one is
 * handed out again instead of a new one.
 */
const lastValues: (string | undefined)[] = [];

/** The value `buf[start, end)` of common field `index` (-1: any other field). */
function fieldValue(buf: Uint8Array, start: number, end: number, index: number): string {
  if (start === end) return "";
  if (index === -1) return latin1(buf, start, end);
  const last = lastValues[index];
  if (last !== undefined && last.length === end - start) {
    let same = true;
    for (let i = 0; i < last.length; i++) {
      if (buf[start + i] !== last.charCodeAt(i)) {
        same = false;
        break;
      }
    }
    if (same) return last;
  }
  return lastValues[index] = latin1(buf, start, end);
}

/** Index just past the LF ending the line at `from` (the head's blank line ends every search). */
function nextLine(buf: Uint8Array, from: number, end: number): number {
  const lf = buf.indexOf(LF, from);
  return lf === -1 || lf >= end ? end : lf + 1;
}

/**
 * Parses the response head in `buf[start, end)` (`end` from {@link findHeadEnd}), from the bytes:
 * no string for the head or its lines, only for the values (and those often shared).
 */
export function parseResponseHead(buf: Uint8Array, start: number, end: number): ResponseHead {
  let lineEnd = nextLine(buf, start, end);
  const statusEnd = lineEnd - (buf[lineEnd - 2] === CR ? 2 : 1);
  const s = start;
  if (
    statusEnd - s < 12 || buf[s] !== 72 || buf[s + 1] !== 84 || buf[s + 2] !== 84 ||
    buf[s + 3] !== 80 || buf[s + 4] !== 47 || buf[s + 5] !== 49 || buf[s + 6] !== 46 ||
    buf[s + 8] !== SP || (statusEnd - s > 12 && buf[s + 12] !== SP)
  ) {
    throw protocolError(`invalid status line ${quoted(buf, s, statusEnd)}`);
  }
  const minor = buf[s + 7] - 48;
  const d1 = buf[s + 9] - 48;
  const d2 = buf[s + 10] - 48;
  const d3 = buf[s + 11] - 48;
  if (
    minor < 0 || minor > 9 || !(d1 >= 1 && d1 <= 9) || !(d2 >= 0 && d2 <= 9) ||
    !(d3 >= 0 && d3 <= 9)
  ) {
    throw protocolError(`invalid status line ${quoted(buf, s, statusEnd)}`);
  }
  const status = d1 * 100 + d2 * 10 + d3;
  // RFC 9112 reason-phrase: HTAB, SP, VCHAR, obs-text (what the Response constructor accepts).
  for (let i = s + 13; i < statusEnd; i++) {
    const c = buf[i];
    if ((c < 0x20 && c !== HTAB) || c === 0x7f) {
      throw protocolError("invalid reason phrase in the status line");
    }
  }
  const statusText = statusEnd <= s + 13
    ? ""
    : statusEnd === s + 15 && buf[s + 13] === 79 && buf[s + 14] === 75
    ? "OK"
    : latin1(buf, s + 13, statusEnd);

  const fields: string[] = [];
  let contentLength = -1;
  let transferCoding: string | null = null;
  let connectionClose = false;
  let keepAlive = false;
  // Names the Connection field lists besides close and keep-alive (rare): left out at the end.
  let named: string[] | null = null;
  for (;;) {
    const lineStart = lineEnd;
    if (lineStart >= end) break;
    lineEnd = nextLine(buf, lineStart, end);
    const stop = lineEnd - (buf[lineEnd - 2] === CR && lineEnd - 2 >= lineStart ? 2 : 1);
    if (stop <= lineStart) break;
    const first = buf[lineStart];
    if (first === SP || first === HTAB) {
      throw protocolError("obsolete line folding in the response head");
    }
    const colon = buf.indexOf(58, lineStart);
    if (colon <= lineStart || colon >= stop) {
      throw protocolError(`malformed header line ${quoted(buf, lineStart, stop)}`);
    }
    const index = commonName(buf, lineStart, colon);
    let name: string;
    if (index !== -1) name = COMMON_NAMES[index];
    else {
      for (let i = lineStart; i < colon; i++) {
        const c = buf[i];
        if (c >= 128 || TCHAR[c] === 0) {
          throw protocolError(`invalid header name ${quoted(buf, lineStart, colon)}`);
        }
      }
      name = latin1(buf, lineStart, colon).toLowerCase();
    }
    // The value without optional whitespace (SP, HTAB) around it.
    let from = colon + 1;
    let to = stop;
    while (from < to && (buf[from] === SP || buf[from] === HTAB)) from++;
    while (to > from && (buf[to - 1] === SP || buf[to - 1] === HTAB)) to--;
    for (let i = from; i < to; i++) {
      const c = buf[i];
      if (c === CR || c === 0) throw protocolError(`invalid value of header ${name}`);
    }
    const value = fieldValue(buf, from, to, index);
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
