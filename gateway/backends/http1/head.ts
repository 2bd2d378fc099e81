/**
 * Writing HTTP/1.1 request heads as bytes. The head is written byte by byte into one scratch
 * buffer and copied out once: no string per field, no TextEncoder result, no closure per request.
 */

import { Http1Error } from "./errors.ts";

import { hasToken, parseLength } from "./response_head.ts";

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** `tchar` of RFC 9110 §5.6.2, by char code. */
const TCHAR = new Uint8Array(128);
for (const c of "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") {
  TCHAR[c.charCodeAt(0)] = 1;
}

/** How a request body is framed on the wire. */
export type RequestFraming = "none" | "length" | "chunked";

/** A request head ready to write, and what it promised about the body. */
export class RequestHead {
  constructor(
    /** The head's bytes, including the blank line that ends it. */
    readonly bytes: Uint8Array<ArrayBuffer>,
    readonly framing: RequestFraming,
    /** The content-length written (0 unless `framing` is `length`). */
    readonly length: number,
    /** The caller sent `connection: close`: the socket is not reused. */
    readonly close: boolean,
  ) {}

  /** The head as text (latin-1), for tests and messages. */
  get text(): string {
    let text = "";
    for (const byte of this.bytes) text += String.fromCharCode(byte);
    return text;
  }
}

// The head being built. forEach calls back synchronously, so one head is built at a time and
// its callback is one module function instead of a closure per request.
let out = new Uint8Array(4096);
let pos = 0;
let sawHost = false;
let sawClose = false;
let declared: string | null = null;
let badField: string | null = null;

/** Room for `n` more bytes. */
function reserve(n: number): void {
  if (pos + n <= out.length) return;
  let size = out.length * 2;
  while (size < pos + n) size *= 2;
  const bigger = new Uint8Array(size);
  bigger.set(out.subarray(0, pos));
  out = bigger;
}

/** Appends `s` as latin-1 (fields are byte strings; as before, code points above 255 keep their low byte). */
function put(s: string): void {
  reserve(s.length);
  for (let i = 0; i < s.length; i++) out[pos++] = s.charCodeAt(i);
}

function putCrlf(): void {
  reserve(2);
  out[pos++] = 13;
  out[pos++] = 10;
}

/** `name: value\r\n`, or false (nothing written) when the name is no token or the value has CR, LF or NUL. */
function putField(name: string, value: string): boolean {
  reserve(name.length + value.length + 4);
  const from = pos;
  if (name.length === 0) return false;
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (c >= 128 || TCHAR[c] === 0) {
      pos = from;
      return false;
    }
    out[pos++] = c;
  }
  out[pos++] = 58;
  out[pos++] = 32;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c === 13 || c === 10 || c === 0) {
      pos = from;
      return false;
    }
    out[pos++] = c;
  }
  out[pos++] = 13;
  out[pos++] = 10;
  return true;
}

/** The forEach callback of {@link buildRequestHead}: one field of the caller's headers. */
function addField(value: string, name: string): void {
  if (badField !== null) return;
  // Headers yields lower-case names. We frame the body ourselves and never wait for 100.
  if (name === "content-length") {
    declared = value;
    return;
  }
  if (name === "transfer-encoding" || name === "expect") return;
  if (!putField(name, value)) {
    badField = name;
    return;
  }
  if (name === "host") sawHost = true;
  else if (name === "connection" && hasToken(value, "close")) sawClose = true;
}

/** Builds the request head for `body`, framing it (content-length or chunked) and validating fields. */
export function buildRequestHead(
  method: string,
  url: URL,
  headers: { forEach(callback: (value: string, name: string) => void): void },
  body: ReadableStream<Uint8Array> | Uint8Array | null,
  /** `url.host`, when the caller has it already. */
  host: string = url.host,
): RequestHead {
  if (!TOKEN.test(method)) {
    throw new Http1Error(`invalid request method ${JSON.stringify(method)}`, "invalid_request");
  }
  pos = 0;
  sawHost = sawClose = false;
  declared = badField = null;
  put(method);
  put(" ");
  put(url.pathname);
  put(url.search);
  put(" HTTP/1.1\r\n");
  const fieldsAt = pos;
  // forEach skips the iterator objects of for-of (measurably cheaper on Deno's Headers).
  headers.forEach(addField);
  if (badField !== null) {
    throw new Http1Error(`invalid request header ${JSON.stringify(badField)}`, "invalid_request");
  }
  if (!sawHost) {
    // The host line goes right after the request line, before the caller's fields.
    const line = 8 + host.length;
    reserve(line);
    out.copyWithin(fieldsAt + line, fieldsAt, pos);
    const end = pos + line;
    pos = fieldsAt;
    put("host: ");
    put(host);
    putCrlf();
    pos = end;
  }
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
  if (framing === "length") {
    put("content-length: ");
    put(String(length));
    putCrlf();
  } else if (framing === "chunked") put("transfer-encoding: chunked\r\n");
  putCrlf();
  return new RequestHead(out.slice(0, pos), framing, length, sawClose);
}

/**
 * `head` followed by `body` in `into` (which must hold both); returns the filled part, so a
 * request with a small body goes out in one write.
 */
export function joinHead(
  head: Uint8Array,
  body: Uint8Array,
  into: Uint8Array<ArrayBuffer>,
): Uint8Array<ArrayBuffer> {
  into.set(head);
  into.set(body, head.byteLength);
  return into.subarray(0, head.byteLength + body.byteLength);
}
