/**
 * QPACK decoding (RFC 9204): encoded field sections, the peer's encoder stream, and the
 * instructions our decoder stream sends back. We announce a maximum table capacity (0 in
 * production, so any insertion is refused) and no blocked streams: a section that needs entries
 * we have not received is a connection error of type QPACK_DECOMPRESSION_FAILED.
 */
import { connectionError, H3, streamError } from "./errors.ts";
import {
  ByteCursor,
  ByteWriter,
  latin1String,
  QpackFormatError,
  QpackTruncatedError,
} from "./qpack_primitives.ts";
import { DynamicTable, entrySize } from "./qpack_table.ts";
import { STATIC_TABLE } from "./qpack_static.ts";

/** One decoded field line. */
export interface FieldLine {
  name: string;
  value: string;
}

/** Limits and table size of a decoder. */
export interface QpackDecoderOptions {
  /** SETTINGS_QPACK_MAX_TABLE_CAPACITY we announced. */
  maxTableCapacity: number;
  /** SETTINGS_QPACK_BLOCKED_STREAMS we announced (sections needing unreceived entries). */
  blockedStreams?: number;
  /** SETTINGS_MAX_FIELD_SECTION_SIZE we announced: a larger section is H3_EXCESSIVE_LOAD. */
  maxFieldSectionSize: number;
}

/** The decoding half of a QPACK context. */
export class QpackDecoder {
  readonly table: DynamicTable;
  readonly #maxSection: number;
  #pending: Uint8Array = new Uint8Array(0);
  #out = new ByteWriter();
  #acknowledged = 0;

  constructor(opts: QpackDecoderOptions) {
    this.table = new DynamicTable(opts.maxTableCapacity);
    this.#maxSection = opts.maxFieldSectionSize;
  }

  /** Feed bytes of the peer's encoder stream; partial instructions wait for more bytes. */
  onEncoderStream(chunk: Uint8Array): void {
    const buf = concat(this.#pending, chunk);
    const cur = new ByteCursor(buf);
    while (!cur.done) {
      const start = cur.pos;
      try {
        this.#encoderInstruction(cur);
      } catch (err) {
        if (err instanceof QpackTruncatedError) {
          cur.pos = start;
          break;
        }
        if (err instanceof QpackFormatError) {
          throw connectionError(H3.QPACK_ENCODER_STREAM_ERROR, err.message);
        }
        throw err;
      }
    }
    this.#pending = buf.slice(cur.pos);
    if (this.#pending.length > 64 * 1024) {
      throw connectionError(H3.QPACK_ENCODER_STREAM_ERROR, "encoder instruction too long");
    }
  }

  #encoderInstruction(cur: ByteCursor): void {
    const first = cur.peek();
    const limit = Math.max(this.table.maxCapacity, 1);
    if (first & 0x80) {
      // Insert With Name Reference: 1Txxxxxx
      const isStatic = (first & 0x40) !== 0;
      const index = cur.int(6);
      const value = text(cur.string(7, limit));
      const name = isStatic ? staticEntry(index)[0] : this.#relative(index).name;
      this.table.insert(name, value);
    } else if (first & 0x40) {
      // Insert With Literal Name: 01Hxxxxx
      const name = text(cur.string(5, limit));
      const value = text(cur.string(7, limit));
      this.table.insert(name, value);
    } else if (first & 0x20) {
      this.table.setCapacity(cur.int(5));
    } else {
      const e = this.#relative(cur.int(5));
      this.table.insert(e.name, e.value);
    }
  }

  #relative(index: number) {
    const e = this.table.get(this.table.insertCount - index - 1);
    if (!e) throw new QpackFormatError(`invalid relative index ${index}`);
    return e;
  }

  /**
   * Decode the payload of a HEADERS frame on stream `streamId`. Format errors and references to
   * unreceived entries are connection errors (QPACK_DECOMPRESSION_FAILED); a section larger than
   * our SETTINGS_MAX_FIELD_SECTION_SIZE is a stream error (H3_EXCESSIVE_LOAD).
   */
  decodeSection(streamId: number, payload: Uint8Array): FieldLine[] {
    try {
      return this.#decode(streamId, payload);
    } catch (err) {
      if (err instanceof QpackFormatError) {
        throw connectionError(H3.QPACK_DECOMPRESSION_FAILED, err.message);
      }
      throw err;
    }
  }

  #decode(streamId: number, payload: Uint8Array): FieldLine[] {
    const cur = new ByteCursor(payload);
    const ric = this.#requiredInsertCount(cur.int(8));
    const sign = (cur.peek() & 0x80) !== 0;
    const delta = cur.int(7);
    if (sign && delta >= ric) throw new QpackFormatError("negative base");
    const base = sign ? ric - delta - 1 : ric + delta;
    if (ric > this.table.insertCount) {
      // We promised no blocked streams: the encoder may not reference what we have not got.
      throw new QpackFormatError(
        `field section needs ${ric} insertions, only ${this.table.insertCount} received`,
      );
    }
    const fields: FieldLine[] = [];
    let size = 0;
    const dyn = (abs: number) => {
      if (abs >= ric) throw new QpackFormatError(`reference ${abs} beyond Required Insert Count`);
      const e = this.table.get(abs);
      if (!e) throw new QpackFormatError(`dynamic entry ${abs} was evicted`);
      return e;
    };
    const limit = this.#maxSection;
    while (!cur.done) {
      const b = cur.peek();
      let name: string;
      let value: string;
      if (b & 0x80) {
        const index = cur.int(6);
        [name, value] = b & 0x40 ? staticEntry(index) : entryPair(dyn(base - index - 1));
      } else if (b & 0x40) {
        const index = cur.int(4);
        name = b & 0x10 ? staticEntry(index)[0] : dyn(base - index - 1).name;
        value = text(cur.string(7, limit));
      } else if (b & 0x20) {
        name = text(cur.string(3, limit));
        value = text(cur.string(7, limit));
      } else if (b & 0x10) {
        [name, value] = entryPair(dyn(base + cur.int(4)));
      } else {
        name = dyn(base + cur.int(3)).name;
        value = text(cur.string(7, limit));
      }
      size += entrySize(name, value);
      if (size > limit) {
        throw streamError(
          H3.EXCESSIVE_LOAD,
          `field section exceeds SETTINGS_MAX_FIELD_SECTION_SIZE of ${limit} bytes`,
        );
      }
      fields.push({ name, value });
    }
    if (ric > 0) {
      this.#out.int(streamId, 7, 0x80);
      if (ric > this.#acknowledged) this.#acknowledged = ric;
    }
    return fields;
  }

  #requiredInsertCount(encoded: number): number {
    if (encoded === 0) return 0;
    const maxEntries = this.table.maxEntries;
    const fullRange = 2 * maxEntries;
    if (encoded > fullRange) throw new QpackFormatError("invalid Required Insert Count");
    const maxValue = this.table.insertCount + maxEntries;
    const maxWrapped = Math.floor(maxValue / fullRange) * fullRange;
    let ric = maxWrapped + encoded - 1;
    if (ric > maxValue) {
      if (ric <= fullRange) throw new QpackFormatError("invalid Required Insert Count");
      ric -= fullRange;
    }
    if (ric === 0) throw new QpackFormatError("invalid Required Insert Count");
    return ric;
  }

  /**
   * Decoder-stream instructions to send: Section Acknowledgments, and an Insert Count Increment
   * for insertions not yet acknowledged. Null when there is nothing to send.
   */
  takeInstructions(): Uint8Array | null {
    const increment = this.table.insertCount - this.#acknowledged;
    if (increment > 0) {
      this.#out.int(increment, 6, 0x00);
      this.#acknowledged = this.table.insertCount;
    }
    if (this.#out.length === 0) return null;
    const bytes = this.#out.finish().slice();
    this.#out = new ByteWriter();
    return bytes;
  }

  /** Queue a Stream Cancellation for a stream whose section we abandoned (RFC 9204 §4.4.2). */
  cancelStream(streamId: number): void {
    // With a zero capacity nothing can reference the table and the instruction may be omitted.
    if (this.table.maxCapacity > 0) this.#out.int(streamId, 6, 0x40);
  }
}

function staticEntry(index: number): readonly [string, string] {
  const e = STATIC_TABLE[index];
  if (!e) throw new QpackFormatError(`static index ${index} out of range`);
  return e;
}

function entryPair(e: { name: string; value: string }): [string, string] {
  return [e.name, e.value];
}

function text(bytes: Uint8Array): string {
  return latin1String(bytes);
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (a.length === 0) return b;
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}
