/**
 * Splits a byte stream into DICOM upper-layer PDUs (PS3.8 9.3: type, reserved byte, 32-bit
 * big-endian length). A PDU inside one chunk is passed on as a view, one spanning chunks is
 * copied once; nothing is re-concatenated per chunk.
 */
import { Buffer } from "node:buffer";

const KNOWN_TYPES = new Set([0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07]);

/** Accumulates chunks and emits whole PDUs. */
export class PduReader {
  #chunks: Buffer[] = [];
  #size = 0;
  readonly #onPdu: (pdu: Buffer) => void;

  constructor(onPdu: (pdu: Buffer) => void) {
    this.#onPdu = onPdu;
  }

  /** Add received bytes; throws on a PDU type that does not exist. */
  push(chunk: Buffer): void {
    this.#chunks.push(chunk);
    this.#size += chunk.byteLength;
    while (this.#size >= 6) {
      const head = this.#peek(6);
      if (!KNOWN_TYPES.has(head[0])) throw new Error(`unknown PDU type ${head[0]}`);
      const total = 6 + head.readUInt32BE(2);
      if (this.#size < total) return;
      this.#onPdu(this.#take(total));
    }
  }

  /** The first `n` bytes (a view when the first chunk holds them). */
  #peek(n: number): Buffer {
    const first = this.#chunks[0];
    if (first.byteLength >= n) return first;
    return Buffer.concat(this.#chunks, this.#size).subarray(0, n);
  }

  /** Remove and return the first `n` bytes. */
  #take(n: number): Buffer {
    const first = this.#chunks[0];
    this.#size -= n;
    if (first.byteLength >= n) {
      if (first.byteLength === n) this.#chunks.shift();
      else this.#chunks[0] = first.subarray(n);
      return first.subarray(0, n);
    }
    const out = Buffer.allocUnsafe(n);
    let at = 0;
    while (at < n) {
      const c = this.#chunks[0];
      const used = Math.min(c.byteLength, n - at);
      c.copy(out, at, 0, used);
      at += used;
      if (used === c.byteLength) this.#chunks.shift();
      else this.#chunks[0] = c.subarray(used);
    }
    return out;
  }
}
