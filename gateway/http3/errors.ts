/** HTTP/3 (RFC 9114 §8.1) and QPACK (RFC 9204 §6) error codes, and the error that carries one. */

/** Application error codes of HTTP/3 and QPACK. */
export const H3 = {
  NO_ERROR: 0x100,
  GENERAL_PROTOCOL_ERROR: 0x101,
  INTERNAL_ERROR: 0x102,
  STREAM_CREATION_ERROR: 0x103,
  CLOSED_CRITICAL_STREAM: 0x104,
  FRAME_UNEXPECTED: 0x105,
  FRAME_ERROR: 0x106,
  EXCESSIVE_LOAD: 0x107,
  ID_ERROR: 0x108,
  SETTINGS_ERROR: 0x109,
  MISSING_SETTINGS: 0x10a,
  REQUEST_REJECTED: 0x10b,
  REQUEST_CANCELLED: 0x10c,
  REQUEST_INCOMPLETE: 0x10d,
  MESSAGE_ERROR: 0x10e,
  CONNECT_ERROR: 0x10f,
  VERSION_FALLBACK: 0x110,
  QPACK_DECOMPRESSION_FAILED: 0x200,
  QPACK_ENCODER_STREAM_ERROR: 0x201,
  QPACK_DECODER_STREAM_ERROR: 0x202,
} as const;

/** Whether an error ends one stream or the whole connection. */
export type ErrorScope = "stream" | "connection";

/** The name of an error code (`H3_FRAME_ERROR`), or its hex value when unknown. */
export function errorName(code: number): string {
  for (const [name, value] of Object.entries(H3)) {
    if (value === code) return name.startsWith("QPACK") ? name : `H3_${name}`;
  }
  return `0x${code.toString(16)}`;
}

/** A protocol error: its code and whether it closes the stream or the connection. */
export class Http3Error extends Error {
  readonly code: number;
  readonly scope: ErrorScope;

  constructor(code: number, scope: ErrorScope, message: string) {
    super(`${errorName(code)}: ${message}`);
    this.name = "Http3Error";
    this.code = code;
    this.scope = scope;
  }
}

/** A connection error with `code`. */
export function connectionError(code: number, message: string): Http3Error {
  return new Http3Error(code, "connection", message);
}

/** A stream error with `code`. */
export function streamError(code: number, message: string): Http3Error {
  return new Http3Error(code, "stream", message);
}
