/**
 * Splits a byte stream into DICOM upper-layer PDUs (PS3.8 9.3: type, reserved byte, 32-bit
 * big-endian length). P-DATA-TF PDUs are not assembled: each of their PDVs (PS3.8 9.3.5.1) is
 * reported as a start (presentation context, message control header, value length), the value in
 * pieces that are views into the received chunks, and an end; so a C-STORE dataset is copied once,
 * by whoever keeps it. Other PDUs (association, release, abort) are reported whole.
 */
import { Buffer } from "node:buffer";

/** The P-DATA-TF PDU type. */
export const P_DATA_TF = 0x04;

const KNOWN_TYPES = new Set([0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07]);

/**
 * Largest association PDU accepted, 1 MiB: they are gathered whole, and a 6-byte header must not
 * make us allocate 4 GiB (an A-ASSOCIATE-RQ with 128 contexts and a user identity is a few KiB).
 */
export const MAX_ASSOCIATION_PDU = 1 << 20;

/** What the reader reports, in stream order. */
export interface PduEvents {
  /** A whole PDU other than P-DATA-TF, header included. */
  pdu(pdu: Buffer): void;
  /** A PDV starts: presentation context id, message control header, value length. */
  pdvStart(contextId: number, control: number, length: number): void;
  /** The next piece of the current PDV's value (a view into a received chunk). */
  pdvValue(piece: Uint8Array): void;
  /** The current PDV's value is complete. */
  pdvEnd(): void;
}

/** Where the reader is in the stream. */
const enum State {
  PduHeader,
  WholePdu,
  PdvHeader,
  PdvValue,
}

/** 32-bit big-endian integer at `at`. */
function u32(b: Uint8Array, at: number): number {
  return ((b[at] << 24) | (b[at + 1] << 16) | (b[at + 2] << 8) | b[at + 3]) >>> 0;
}

/** Accumulates chunks and reports PDUs and PDVs. */
export class PduReader {
  readonly #events: PduEvents;
  #state = State.PduHeader;
  /** A 6-byte PDU or PDV header gathered across chunks. */
  readonly #head = new Uint8Array(6);
  #headFilled = 0;
  /** A whole non-P-DATA PDU being gathered. */
  #whole: Uint8Array = new Uint8Array(0);
  #wholeFilled = 0;
  /** P-DATA-TF bytes after the current position. */
  #pduLeft = 0;
  /** Value bytes of the current PDV still to come. */
  #valueLeft = 0;

  constructor(events: PduEvents) {
    this.#events = events;
  }

  /** Add received bytes; throws on a PDU type that does not exist or a malformed P-DATA-TF. */
  push(chunk: Uint8Array): void {
    let at = 0;
    const end = chunk.byteLength;
    while (at < end) {
      if (this.#state === State.PdvValue) {
        const n = Math.min(this.#valueLeft, end - at);
        this.#events.pdvValue(chunk.subarray(at, at + n));
        at += n;
        this.#valueLeft -= n;
        this.#pduLeft -= n;
        if (this.#valueLeft === 0) this.#pdvDone();
      } else if (this.#state === State.WholePdu) {
        const n = Math.min(this.#whole.byteLength - this.#wholeFilled, end - at);
        this.#whole.set(chunk.subarray(at, at + n), this.#wholeFilled);
        this.#wholeFilled += n;
        at += n;
        if (this.#wholeFilled === this.#whole.byteLength) this.#wholeDone();
      } else if (this.#headFilled === 0 && end - at >= 6) {
        this.#header(chunk, at);
        at += 6;
      } else {
        const n = Math.min(6 - this.#headFilled, end - at);
        this.#head.set(chunk.subarray(at, at + n), this.#headFilled);
        this.#headFilled += n;
        at += n;
        if (this.#headFilled === 6) {
          this.#headFilled = 0;
          this.#header(this.#head, 0);
        }
      }
    }
  }

  /** A complete 6-byte header at `h[at]`: a PDU's or, inside a P-DATA-TF, a PDV's. */
  #header(h: Uint8Array, at: number): void {
    if (this.#state === State.PduHeader) {
      const type = h[at];
      if (!KNOWN_TYPES.has(type)) throw new Error(`unknown PDU type ${type}`);
      const length = u32(h, at + 2);
      if (type === P_DATA_TF) {
        this.#pduLeft = length;
        this.#next();
        return;
      }
      if (length > MAX_ASSOCIATION_PDU) {
        throw new Error(`a PDU of type ${type} of ${length} bytes is over ${MAX_ASSOCIATION_PDU}`);
      }
      this.#whole = new Uint8Array(6 + length);
      this.#whole.set(h.subarray(at, at + 6));
      this.#wholeFilled = 6;
      this.#state = State.WholePdu;
      if (length === 0) this.#wholeDone();
      return;
    }
    const itemLength = u32(h, at);
    if (itemLength < 2 || itemLength > this.#pduLeft - 4) {
      throw new Error(`malformed P-DATA-TF: PDV length ${itemLength}, ${this.#pduLeft} bytes left`);
    }
    this.#pduLeft -= 6;
    this.#valueLeft = itemLength - 2;
    this.#state = State.PdvValue;
    this.#events.pdvStart(h[at + 4], h[at + 5], this.#valueLeft);
    if (this.#valueLeft === 0) this.#pdvDone();
  }

  #wholeDone(): void {
    const pdu = this.#whole;
    this.#whole = new Uint8Array(0);
    this.#state = State.PduHeader;
    this.#events.pdu(Buffer.from(pdu.buffer, pdu.byteOffset, pdu.byteLength));
  }

  #pdvDone(): void {
    this.#events.pdvEnd();
    this.#next();
  }

  /** After a P-DATA-TF header or a PDV: the next PDV of the PDU, or the next PDU. */
  #next(): void {
    if (this.#pduLeft === 0) this.#state = State.PduHeader;
    else if (this.#pduLeft < 6) {
      throw new Error(`malformed P-DATA-TF: ${this.#pduLeft} bytes after the last PDV`);
    } else this.#state = State.PdvHeader;
  }
}
