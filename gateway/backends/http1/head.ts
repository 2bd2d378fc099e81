/** Writing HTTP/1.1 request heads and parsing response heads from bytes. */

import { Http1Error } from "./errors.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const BAD_VALUE = /[\0\r\n]/;
// RFC 9112 reason-phrase: HTAB, SP, VCHAR, obs-text (what the Response constructor accepts).
const REASON = /^[\t\x20-\x7e\x80-\xff]*$/;
const DIGITS = /^\d{1,15}$/;
const LF = 10;
const CR = 13;

/** How a request body is framed on the wire. */
export type RequestFraming = "none" | "length" | "chunked";

/** A request head ready to write, and what it promised about the body. */
export interface RequestHead {
  /** The head including the blank line that ends it. */
  text: string;
  framing: RequestFraming;
  /** The content-length written (0 unless `framing` is `length`). */
  length: number;
  /** The caller sent `connection: close`: the socket is not reused. */
  close: boolean;
}

/** Builds the request head for `body`, framing it (content-length or chunked) and validating fields. */
export function buildRequestHead(
  method: string,
  url: URL,
  headers: { forEach(callback: (value: string, name: string) => void): void },
  body: ReadableStream<Uint8Array> | Uint8Array | null,
): RequestHead {
  if (!TOKEN.test(method)) {
    throw new Http1Error(`invalid request method ${JSON.stringify(method)}`, "invalid_request");
  }
  let fields = "";
  let host = false;
  let close = false;
  let declared: string | null = null;
  // forEach skips the iterator objects of for-of (measurably cheaper on Deno's Headers).
  headers.forEach((value, name) => {
    if (!TOKEN.test(name) || BAD_VALUE.test(value)) {
      throw new Http1Error(`invalid request header ${JSON.stringify(name)}`, "invalid_request");
    }
    // Headers yields lower-case names. We frame the body ourselves and never wait for 100.
    if (name === "content-length") declared = value;
    else if (name !== "transfer-encoding" && name !== "expect") {
      if (name === "host") host = true;
      else if (name === "connection" && hasToken(value, "close")) close = true;
      fields += name + ": " + value + "\r\n";
    }
  });
  let text = method + " " + url.pathname + url.search + " HTTP/1.1\r\n";
  if (!host) text += "host: " + url.host + "\r\n";
  text += fields;
  let framing: RequestFraming = "none";
  let length = 0;
  if (body instanceof Uint8Array) {
    // An empty body on GET/HEAD is no body: no length header, like a null one.
    if (body.byteLength > 0 || (method !== "GET" && method !== "HEAD")) framing = "length";
    length = body.byteLength;
  } else if (body !== null) {
    if (declared === null) framing = "chunked";
    else {
      length = parseLength(declared, "request content-length", "invalid_request");
      framing = "length";
    }
  } else if (method === "POST" || method === "PUT" || method === "PATCH") {
    // RFC 9110 §8.6: a body-carrying method without content still says so.
    framing = "length";
  }
  if (framing === "length") text += "content-length: " + length + "\r\n";
  else if (framing === "chunked") text += "transfer-encoding: chunked\r\n";
  return { text: text + "\r\n", framing, length, close };
}

/**
 * Encodes `head` (latin-1, as fields are byte strings) followed by `body` into `out` (which must
 * hold both) and returns the filled part.
 */
export function encodeHead(
  head: string,
  body: Uint8Array | null,
  out: Uint8Array<ArrayBuffer>,
): Uint8Array<ArrayBuffer> {
  const { written } = encoder.encodeInto(head, out);
  if (written !== head.length) {
    for (let i = 0; i < head.length; i++) out[i] = head.charCodeAt(i);
  }
  if (body) out.set(body, head.length);
  return out.subarray(0, head.length + (body?.byteLength ?? 0));
}

/** A parsed response head. */
export interface ResponseHead {
  status: number;
  statusText: string;
  /** 0 for HTTP/1.0, 1 for HTTP/1.1 (and later 1.x). */
  minor: number;
  /** Names and values alternating, in order, duplicates kept. */
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
  const bytes = buf.subarray(start, end);
  let ascii = true;
  for (let i = 0; i < bytes.length; i++) {
    if (bytes[i] > 0x7f) {
      ascii = false;
      break;
    }
  }
  if (ascii) return decoder.decode(bytes);
  let text = "";
  for (let i = 0; i < bytes.length; i += 4096) {
    text += String.fromCharCode(...bytes.subarray(i, i + 4096));
  }
  return text;
}

function protocolError(message: string): Http1Error {
  return new Http1Error(message, "protocol");
}

/** Parses the response head in `buf[start, end)` (`end` from {@link findHeadEnd}). */
export function parseResponseHead(buf: Uint8Array, start: number, end: number): ResponseHead {
  const text = decodeHead(buf, start, end);
  let lineEnd = text.indexOf("\n");
  const statusLine = trimCr(text.slice(0, lineEnd));
  if (
    !statusLine.startsWith("HTTP/1.") || statusLine.charCodeAt(8) !== 32 ||
    (statusLine.length > 12 && statusLine.charCodeAt(12) !== 32)
  ) {
    throw protocolError(`invalid status line ${JSON.stringify(statusLine.slice(0, 64))}`);
  }
  const minor = statusLine.charCodeAt(7) - 48;
  const code = statusLine.slice(9, 12);
  if (minor < 0 || minor > 9 || !/^[1-9]\d\d$/.test(code)) {
    throw protocolError(`invalid status line ${JSON.stringify(statusLine.slice(0, 64))}`);
  }
  const statusText = statusLine.slice(13);
  if (!REASON.test(statusText)) throw protocolError("invalid reason phrase in the status line");

  const fields: string[] = [];
  let contentLength = -1;
  let transferCoding: string | null = null;
  let connectionClose = false;
  let keepAlive = false;
  for (;;) {
    const lineStart = lineEnd + 1;
    lineEnd = text.indexOf("\n", lineStart);
    const line = trimCr(text.slice(lineStart, lineEnd));
    if (line.length === 0) break;
    const first = line.charCodeAt(0);
    if (first === 32 || first === 9) {
      throw protocolError("obsolete line folding in the response head");
    }
    const colon = line.indexOf(":");
    if (colon <= 0) {
      throw protocolError(`malformed header line ${JSON.stringify(line.slice(0, 64))}`);
    }
    const name = line.slice(0, colon);
    const value = line.slice(colon + 1).trim();
    if (!TOKEN.test(name)) throw protocolError(`invalid header name ${JSON.stringify(name)}`);
    if (BAD_VALUE.test(value)) throw protocolError(`invalid value of header ${name}`);
    // Length checks first so ordinary fields cost no lower-casing.
    if (name.length === 14 && name.toLowerCase() === "content-length") {
      const length = parseLength(value, "content-length", "protocol");
      if (contentLength !== -1 && contentLength !== length) {
        throw protocolError("conflicting content-length headers");
      }
      contentLength = length;
    } else if (name.length === 17 && name.toLowerCase() === "transfer-encoding") {
      const codings = value.toLowerCase().split(",");
      transferCoding = codings[codings.length - 1].trim();
    } else if (name.length === 10 && name.toLowerCase() === "connection") {
      if (hasToken(value, "close")) connectionClose = true;
      if (hasToken(value, "keep-alive")) keepAlive = true;
    }
    fields.push(name, value);
  }
  const status = Number(code);
  // HTTP/1.0 closes unless it asked to keep alive; a length with a transfer-encoding may be a
  // smuggling attempt (RFC 9112 §6.1), so that connection is not reused either.
  const close = connectionClose || (minor === 0 && !keepAlive) ||
    (transferCoding !== null && contentLength !== -1);
  return { status, statusText, minor, fields, contentLength, transferCoding, close };
}

function trimCr(line: string): string {
  return line.charCodeAt(line.length - 1) === CR ? line.slice(0, -1) : line;
}

/** Parses a content-length value (a list of identical values is accepted, RFC 9110 §8.6). */
function parseLength(
  value: string,
  what: string,
  code: "protocol" | "invalid_request",
): number {
  const parts = value.includes(",") ? value.split(",").map((part) => part.trim()) : [value];
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
