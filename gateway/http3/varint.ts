/** QUIC variable-length integers (RFC 9000 §16): 1, 2, 4 or 8 bytes, values below 2^62. */

/** Largest value a varint can carry (2^62 - 1). */
export const MAX_VARINT = 2n ** 62n - 1n;

/** Number of bytes the varint encoding of `value` takes. */
export function varintLength(value: number): number {
  if (value < 0 || !Number.isInteger(value)) throw new RangeError(`invalid varint ${value}`);
  if (value < 0x40) return 1;
  if (value < 0x4000) return 2;
  if (value < 0x40000000) return 4;
  if (value <= Number.MAX_SAFE_INTEGER) return 8;
  throw new RangeError(`varint ${value} is too large`);
}

/** Write `value` at `offset`; returns the offset after it. */
export function writeVarint(out: Uint8Array, offset: number, value: number): number {
  const len = varintLength(value);
  switch (len) {
    case 1:
      out[offset] = value;
      break;
    case 2:
      out[offset] = 0x40 | (value >>> 8);
      out[offset + 1] = value & 0xff;
      break;
    case 4:
      out[offset] = 0x80 | (value >>> 24);
      out[offset + 1] = (value >>> 16) & 0xff;
      out[offset + 2] = (value >>> 8) & 0xff;
      out[offset + 3] = value & 0xff;
      break;
    default: {
      const high = Math.floor(value / 2 ** 32);
      const low = value >>> 0;
      out[offset] = 0xc0 | (high >>> 24);
      out[offset + 1] = (high >>> 16) & 0xff;
      out[offset + 2] = (high >>> 8) & 0xff;
      out[offset + 3] = high & 0xff;
      out[offset + 4] = low >>> 24;
      out[offset + 5] = (low >>> 16) & 0xff;
      out[offset + 6] = (low >>> 8) & 0xff;
      out[offset + 7] = low & 0xff;
    }
  }
  return offset + len;
}

/** The varint encoding of `value`. */
export function encodeVarint(value: number): Uint8Array {
  const out = new Uint8Array(varintLength(value));
  writeVarint(out, 0, value);
  return out;
}

/** A decoded varint and the bytes it took. */
export interface DecodedVarint {
  value: number;
  length: number;
}

/**
 * Read a varint at `offset`; null when `buf` ends before it does. Values above 2^53 (which no
 * frame length or stream id of ours can reach) come back as `Infinity` so limits reject them.
 */
export function readVarint(buf: Uint8Array, offset: number): DecodedVarint | null {
  if (offset >= buf.length) return null;
  const first = buf[offset];
  const length = 1 << (first >> 6);
  if (offset + length > buf.length) return null;
  let value = first & 0x3f;
  for (let i = 1; i < length; i++) value = value * 256 + buf[offset + i];
  if (value > Number.MAX_SAFE_INTEGER) value = Infinity;
  return { value, length };
}
