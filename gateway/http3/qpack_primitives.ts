/**
 * Primitive types of QPACK (RFC 9204 §4.1): prefixed integers (RFC 7541 §5.1) and string literals
 * with an optional Huffman encoding (RFC 7541 §5.2) whose length prefix may start mid-byte.
 */
import { huffmanDecode, huffmanEncode, huffmanEncodedLength, HuffmanError } from "./huffman.ts";

/** Raised when an encoded field section or instruction is invalid. */
export class QpackFormatError extends Error {}

/** Raised when input ends inside an instruction (more bytes may complete it). */
export class QpackTruncatedError extends QpackFormatError {}

/**
 * Field names and values are octets; they are handled as Latin-1 strings, one char per byte,
 * which is how the Fetch `Headers` class holds them (ByteString).
 */
export function latin1Bytes(value: string): Uint8Array {
  const out = new Uint8Array(value.length);
  for (let i = 0; i < value.length; i++) out[i] = value.charCodeAt(i) & 0xff;
  return out;
}

/** The Latin-1 string of octets (see {@link latin1Bytes}). */
export function latin1String(bytes: Uint8Array): string {
  let out = "";
  for (let i = 0; i < bytes.length; i += 8192) {
    out += String.fromCharCode(...bytes.subarray(i, i + 8192));
  }
  return out;
}

/** A growable byte buffer used by the encoders. */
export class ByteWriter {
  #buf = new Uint8Array(64);
  #len = 0;

  /** Bytes written so far. */
  get length(): number {
    return this.#len;
  }

  #reserve(n: number): void {
    if (this.#len + n <= this.#buf.length) return;
    let size = this.#buf.length * 2;
    while (size < this.#len + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.#buf.subarray(0, this.#len));
    this.#buf = next;
  }

  /** Append one byte. */
  byte(b: number): void {
    this.#reserve(1);
    this.#buf[this.#len++] = b;
  }

  /** Append bytes. */
  bytes(b: Uint8Array): void {
    this.#reserve(b.length);
    this.#buf.set(b, this.#len);
    this.#len += b.length;
  }

  /**
   * Append an integer with an N-bit prefix; `flags` holds the bits above the prefix in the first
   * byte.
   */
  int(value: number, prefixBits: number, flags: number): void {
    const max = (1 << prefixBits) - 1;
    if (value < max) {
      this.byte(flags | value);
      return;
    }
    this.byte(flags | max);
    let rest = value - max;
    while (rest >= 128) {
      this.byte((rest % 128) | 0x80);
      rest = Math.floor(rest / 128);
    }
    this.byte(rest);
  }

  /**
   * Append a string literal whose H bit sits just above an N-bit length prefix; Huffman is used
   * when it is shorter.
   */
  string(value: string | Uint8Array, prefixBits: number, flags: number): void {
    const raw = typeof value === "string" ? latin1Bytes(value) : value;
    const huffLen = huffmanEncodedLength(raw);
    if (huffLen < raw.length) {
      this.int(huffLen, prefixBits, flags | (1 << prefixBits));
      this.bytes(huffmanEncode(raw));
    } else {
      this.int(raw.length, prefixBits, flags);
      this.bytes(raw);
    }
  }

  /** The bytes written (a view; copy if the writer is reused). */
  finish(): Uint8Array {
    return this.#buf.subarray(0, this.#len);
  }
}

/** A cursor over encoded bytes. */
export class ByteCursor {
  readonly buf: Uint8Array;
  pos: number;
  readonly end: number;

  constructor(buf: Uint8Array, pos = 0, end = buf.length) {
    this.buf = buf;
    this.pos = pos;
    this.end = end;
  }

  /** True when every byte was consumed. */
  get done(): boolean {
    return this.pos >= this.end;
  }

  /** The next byte without consuming it. */
  peek(): number {
    if (this.pos >= this.end) throw new QpackTruncatedError("truncated");
    return this.buf[this.pos];
  }

  /** Read an integer with an N-bit prefix (the prefix byte is consumed). */
  int(prefixBits: number): number {
    const max = (1 << prefixBits) - 1;
    let value = this.peek() & max;
    this.pos++;
    if (value < max) return value;
    let shift = 1;
    while (true) {
      if (this.pos >= this.end) throw new QpackTruncatedError("truncated integer");
      const b = this.buf[this.pos++];
      value += (b & 0x7f) * shift;
      if (value > Number.MAX_SAFE_INTEGER || shift > 2 ** 49) {
        throw new QpackFormatError("integer too large");
      }
      shift *= 128;
      if ((b & 0x80) === 0) return value;
    }
  }

  /**
   * Read a string literal whose H bit is just above an N-bit length prefix; `maxLength` bounds
   * the encoded and decoded length.
   */
  string(prefixBits: number, maxLength: number): Uint8Array {
    const huffman = (this.peek() & (1 << prefixBits)) !== 0;
    const len = this.int(prefixBits);
    if (len > maxLength) throw new QpackFormatError(`string of ${len} bytes exceeds the limit`);
    if (this.pos + len > this.end) throw new QpackTruncatedError("truncated string");
    const raw = this.buf.subarray(this.pos, this.pos + len);
    this.pos += len;
    if (!huffman) return raw;
    try {
      return huffmanDecode(raw);
    } catch (err) {
      if (err instanceof HuffmanError) throw new QpackFormatError(err.message);
      throw err;
    }
  }
}
