/**
 * HTTP/3 frames (RFC 9114 §7): type and length varints, then the payload. Frame types we act on
 * are DATA, HEADERS, SETTINGS and GOAWAY; CANCEL_PUSH, PUSH_PROMISE and MAX_PUSH_ID are parsed
 * for validity; HTTP/2 frame types are errors; every other type (reserved or unknown) is skipped.
 */
import { connectionError, H3 } from "./errors.ts";
import { readVarint, varintLength, writeVarint } from "./varint.ts";

/** Frame types of RFC 9114 §7.2. */
export const FRAME = {
  DATA: 0x00,
  HEADERS: 0x01,
  CANCEL_PUSH: 0x03,
  SETTINGS: 0x04,
  PUSH_PROMISE: 0x05,
  GOAWAY: 0x07,
  MAX_PUSH_ID: 0x0d,
} as const;

/** HTTP/2 frame types that have no HTTP/3 meaning; receiving one is H3_FRAME_UNEXPECTED. */
export const HTTP2_ONLY_FRAMES: ReadonlySet<number> = new Set([0x02, 0x06, 0x08, 0x09]);

/** Unidirectional stream types of RFC 9114 §6.2 and RFC 9204 §4.2. */
export const STREAM_TYPE = {
  CONTROL: 0x00,
  PUSH: 0x01,
  QPACK_ENCODER: 0x02,
  QPACK_DECODER: 0x03,
} as const;

/** True for the reserved "grease" identifiers `0x1f * N + 0x21` (types, settings, errors). */
export function isReserved(id: number): boolean {
  return id >= 0x21 && (id - 0x21) % 0x1f === 0;
}

/** Encode a frame header (type and payload length). */
export function frameHeader(type: number, length: number): Uint8Array {
  const out = new Uint8Array(varintLength(type) + varintLength(length));
  writeVarint(out, writeVarint(out, 0, type), length);
  return out;
}

/** Encode a whole frame. */
export function encodeFrame(type: number, payload: Uint8Array): Uint8Array {
  const hl = varintLength(type) + varintLength(payload.length);
  const out = new Uint8Array(hl + payload.length);
  writeVarint(out, writeVarint(out, 0, type), payload.length);
  out.set(payload, hl);
  return out;
}

/** A GOAWAY frame carrying a stream or push id. */
export function encodeGoaway(id: number): Uint8Array {
  const payload = new Uint8Array(varintLength(id));
  writeVarint(payload, 0, id);
  return encodeFrame(FRAME.GOAWAY, payload);
}

/** Read the single varint payload of GOAWAY, MAX_PUSH_ID or CANCEL_PUSH. */
export function decodeIdPayload(type: number, payload: Uint8Array): number {
  const v = readVarint(payload, 0);
  if (!v || v.length !== payload.length) {
    throw connectionError(H3.FRAME_ERROR, `malformed payload of frame type 0x${type.toString(16)}`);
  }
  return v.value;
}

/** A parsed frame header. */
export interface FrameHeader {
  type: number;
  length: number;
  /** Bytes the header took. */
  headerLength: number;
}

/** Parse a frame header at `offset`; null when more bytes are needed. */
export function parseFrameHeader(buf: Uint8Array, offset: number): FrameHeader | null {
  const type = readVarint(buf, offset);
  if (!type) return null;
  const len = readVarint(buf, offset + type.length);
  if (!len) return null;
  return { type: type.value, length: len.value, headerLength: type.length + len.length };
}
