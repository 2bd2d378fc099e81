/** The SETTINGS frame (RFC 9114 §7.2.4) and the settings we announce. */
import { connectionError, H3 } from "./errors.ts";
import { encodeFrame, FRAME } from "./frames.ts";
import { readVarint, varintLength, writeVarint } from "./varint.ts";

/** Setting identifiers of HTTP/3 and QPACK. */
export const SETTING = {
  QPACK_MAX_TABLE_CAPACITY: 0x01,
  MAX_FIELD_SECTION_SIZE: 0x06,
  QPACK_BLOCKED_STREAMS: 0x07,
} as const;

/** HTTP/2 setting identifiers that must not appear in HTTP/3 SETTINGS (§7.2.4.1). */
const HTTP2_SETTINGS = new Set([0x00, 0x02, 0x03, 0x04, 0x05]);

/** Settings of one endpoint; absent settings take their defaults. */
export interface Settings {
  qpackMaxTableCapacity: number;
  maxFieldSectionSize: number;
  qpackBlockedStreams: number;
}

/** Defaults when a peer does not send a setting (RFC 9114 §7.2.4.1, RFC 9204 §5). */
export const DEFAULT_PEER_SETTINGS: Settings = {
  qpackMaxTableCapacity: 0,
  maxFieldSectionSize: Infinity,
  qpackBlockedStreams: 0,
};

/** Encode a SETTINGS frame; zero QPACK values are sent explicitly, as we announce them. */
export function encodeSettings(s: Settings, extra: [number, number][] = []): Uint8Array {
  const pairs: [number, number][] = [
    [SETTING.QPACK_MAX_TABLE_CAPACITY, s.qpackMaxTableCapacity],
    [SETTING.QPACK_BLOCKED_STREAMS, s.qpackBlockedStreams],
    ...extra,
  ];
  if (Number.isFinite(s.maxFieldSectionSize)) {
    pairs.push([SETTING.MAX_FIELD_SECTION_SIZE, s.maxFieldSectionSize]);
  }
  let len = 0;
  for (const [id, v] of pairs) len += varintLength(id) + varintLength(v);
  const payload = new Uint8Array(len);
  let off = 0;
  for (const [id, v] of pairs) off = writeVarint(payload, writeVarint(payload, off, id), v);
  return encodeFrame(FRAME.SETTINGS, payload);
}

/** Decode a SETTINGS payload; duplicates and HTTP/2 identifiers are H3_SETTINGS_ERROR. */
export function decodeSettings(payload: Uint8Array): Settings {
  const out: Settings = { ...DEFAULT_PEER_SETTINGS };
  const seen = new Set<number>();
  let off = 0;
  while (off < payload.length) {
    const id = readVarint(payload, off);
    const value = id ? readVarint(payload, off + id.length) : null;
    if (!id || !value) throw connectionError(H3.FRAME_ERROR, "truncated SETTINGS frame");
    off += id.length + value.length;
    if (seen.has(id.value)) {
      throw connectionError(H3.SETTINGS_ERROR, `setting 0x${id.value.toString(16)} repeated`);
    }
    seen.add(id.value);
    if (HTTP2_SETTINGS.has(id.value)) {
      throw connectionError(
        H3.SETTINGS_ERROR,
        `HTTP/2 setting 0x${id.value.toString(16)} in HTTP/3 SETTINGS`,
      );
    }
    switch (id.value) {
      case SETTING.QPACK_MAX_TABLE_CAPACITY:
        out.qpackMaxTableCapacity = value.value;
        break;
      case SETTING.MAX_FIELD_SECTION_SIZE:
        out.maxFieldSectionSize = value.value;
        break;
      case SETTING.QPACK_BLOCKED_STREAMS:
        out.qpackBlockedStreams = value.value;
        break;
      default:
        // Unknown and reserved settings are ignored (§7.2.4).
    }
  }
  return out;
}
