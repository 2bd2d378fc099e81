/**
 * HTTP semantics of HTTP/3 field sections (RFC 9114 §4.2-4.3): pseudo-header rules, lowercase
 * names, prohibited connection-specific fields, and conversion to and from Fetch `Headers`.
 * A violation makes the message malformed: a stream error of type H3_MESSAGE_ERROR.
 */
import { H3, streamError } from "./errors.ts";
import type { FieldLine } from "./qpack_decoder.ts";

/** Fields that are connection-specific in HTTP/1.1 and prohibited in HTTP/3 (§4.2). */
const CONNECTION_SPECIFIC = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "transfer-encoding",
  "upgrade",
]);

const REQUEST_PSEUDO = new Set([":method", ":scheme", ":authority", ":path"]);
// A token (RFC 9110 §5.6.2), lowercase: the characters a field name may have in HTTP/3.
const NAME = /^[!#$%&'*+\-.^_`|~0-9a-z]+$/;
// Field values must not contain NUL, CR or LF, nor start or end with whitespace (§4.2, 9110 §5.5).
const BAD_VALUE = /[\0\r\n]|^[ \t]|[ \t]$/;

/** The pseudo-header fields and headers of a request. */
export interface RequestHead {
  method: string;
  scheme: string;
  authority: string;
  path: string;
  headers: Headers;
}

/** The status and headers of a response. */
export interface ResponseHead {
  status: number;
  headers: Headers;
}

function malformed(message: string): never {
  throw streamError(H3.MESSAGE_ERROR, message);
}

/** Check regular fields and add them to `headers` (cookie lines joined with `; `, §4.2.1). */
function regularFields(fields: FieldLine[], start: number, headers: Headers): void {
  let cookie: string | undefined;
  for (let i = start; i < fields.length; i++) {
    const { name, value } = fields[i];
    if (name.startsWith(":")) malformed(`pseudo-header ${name} after a regular field`);
    if (!NAME.test(name)) malformed(`invalid field name ${JSON.stringify(name)}`);
    if (BAD_VALUE.test(value)) malformed(`invalid value of field ${name}`);
    if (CONNECTION_SPECIFIC.has(name)) malformed(`connection-specific field ${name}`);
    if (name === "te" && value.toLowerCase() !== "trailers") malformed("TE other than trailers");
    if (name === "cookie") {
      cookie = cookie === undefined ? value : `${cookie}; ${value}`;
      continue;
    }
    headers.append(name, value);
  }
  if (cookie !== undefined) headers.set("cookie", cookie);
}

/** Validate a request's field section (§4.3.1); throws H3_MESSAGE_ERROR when malformed. */
export function parseRequestHead(fields: FieldLine[]): RequestHead {
  const pseudo = new Map<string, string>();
  let i = 0;
  for (; i < fields.length && fields[i].name.startsWith(":"); i++) {
    const { name, value } = fields[i];
    if (!REQUEST_PSEUDO.has(name)) malformed(`unknown or response pseudo-header ${name}`);
    if (pseudo.has(name)) malformed(`repeated pseudo-header ${name}`);
    pseudo.set(name, value);
  }
  const headers = new Headers();
  regularFields(fields, i, headers);
  const method = pseudo.get(":method");
  if (!method || !/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(method)) malformed("missing :method");
  const host = headers.get("host");
  if (method === "CONNECT") {
    if (pseudo.has(":scheme") || pseudo.has(":path")) malformed("CONNECT with :scheme or :path");
    const authority = pseudo.get(":authority");
    if (!authority) malformed("CONNECT without :authority");
    return { method, scheme: "https", authority, path: "", headers };
  }
  const scheme = pseudo.get(":scheme");
  const path = pseudo.get(":path");
  if (!scheme) malformed("missing :scheme");
  if (!path) malformed("missing or empty :path");
  if (path !== "*" && !path.startsWith("/")) malformed("invalid :path");
  let authority = pseudo.get(":authority");
  if (authority !== undefined && host !== null && host !== authority) {
    malformed(":authority and Host differ");
  }
  authority ??= host ?? undefined;
  if (!authority && (scheme === "http" || scheme === "https")) {
    malformed("missing :authority and Host");
  }
  return { method, scheme, authority: authority ?? "", path, headers };
}

/** Validate a response's field section (§4.3.2); throws H3_MESSAGE_ERROR when malformed. */
export function parseResponseHead(fields: FieldLine[]): ResponseHead {
  let status: number | undefined;
  let i = 0;
  for (; i < fields.length && fields[i].name.startsWith(":"); i++) {
    const { name, value } = fields[i];
    if (name !== ":status") malformed(`unknown or request pseudo-header ${name}`);
    if (status !== undefined) malformed("repeated :status");
    if (!/^[1-9][0-9]{2}$/.test(value)) malformed(`invalid :status ${value}`);
    status = Number(value);
  }
  if (status === undefined) malformed("missing :status");
  const headers = new Headers();
  regularFields(fields, i, headers);
  return { status, headers };
}

/** Validate a trailer section: no pseudo-headers (§4.1.2). */
export function parseTrailers(fields: FieldLine[]): Headers {
  const headers = new Headers();
  regularFields(fields, 0, headers);
  return headers;
}

/**
 * Field lines to send for `headers`: names lowercase (Headers already holds them so), without
 * connection-specific fields and `host` (carried by `:authority`).
 */
export function outgoingFields(headers: Headers): [string, string][] {
  const out: [string, string][] = [];
  for (const [name, value] of headers) {
    if (CONNECTION_SPECIFIC.has(name) || name === "host") continue;
    if (name === "te" && value.toLowerCase() !== "trailers") continue;
    if (name === "set-cookie") continue;
    out.push([name, value]);
  }
  for (const cookie of headers.getSetCookie()) out.push(["set-cookie", cookie]);
  return out;
}

/** The declared Content-Length, or null; several different values are malformed. */
export function declaredLength(headers: Headers): number | null {
  const v = headers.get("content-length");
  if (v === null) return null;
  const parts = v.split(",").map((p) => p.trim());
  if (!parts.every((p) => /^[0-9]+$/.test(p)) || new Set(parts).size !== 1) {
    malformed("invalid content-length");
  }
  return Number(parts[0]);
}
