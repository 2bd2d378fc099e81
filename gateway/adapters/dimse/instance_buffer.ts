/**
 * Assembles a received C-STORE dataset behind the Part 10 header of its instance, so the file is
 * built with one copy of each fragment as it arrives. The expected size (the previous instance on
 * the association: a series is usually one size) is allocated up front; a larger dataset grows the
 * buffer, a much smaller one is copied out so no large buffer is held for a small file. The memory
 * may be prepared in advance (`prefaulted`, between two instances, while the sender is busy): the
 * first write to each page of fresh memory is a page fault, which costs more than the copy. A spool,
 * when given, receives the file's bytes in order while they arrive, in slices below 64 KiB.
 */

/** Receives a file's bytes in order while it is being received. */
export interface FileSpool {
  /** The next bytes of the file (a view that stays valid and unchanged). */
  write(bytes: Uint8Array): void;
  /** The transfer broke off: drop what was written. */
  abort(): void;
}

/** Largest slice handed to a spool: below 64 KiB, where a copy made by the runtime stays cheap. */
export const SPOOL_SLICE = 60 * 1024;

const PAGE = 4096;
/** Extra room in memory allocated for an expected size (UIDs and text values vary in length). */
const HEADROOM = 512;

/** Fresh memory of `size` bytes with every page already touched (faulted in). */
export function prefaulted(size: number): Uint8Array {
  const memory = new Uint8Array(size);
  for (let at = 0; at < size; at += PAGE) memory[at] = 0;
  return memory;
}

/** Growing buffer for one instance file. */
export class InstanceBuffer {
  readonly headerLength: number;
  /** The spool the file's bytes go to, if any. */
  readonly spool: FileSpool | undefined;
  #buf: Uint8Array;
  #used: number;
  /** Bytes already handed to the spool. */
  #spooled = 0;

  /**
   * `header`: the Part 10 preamble and meta group; `expected`: the likely dataset size; `spool`:
   * where the bytes go while they arrive; `memory`: zeroed memory to use when it is large enough.
   */
  constructor(header: Uint8Array, expected: number, spool?: FileSpool, memory?: Uint8Array) {
    this.headerLength = header.byteLength;
    this.spool = spool;
    const size = header.byteLength + Math.max(expected, 0);
    // Fresh memory gets room for a slightly longer header or dataset, so it can be recycled.
    this.#buf = memory && memory.byteLength >= size
      ? memory
      : new Uint8Array(expected > 0 ? size + HEADROOM : size);
    this.#buf.set(header);
    this.#used = header.byteLength;
  }

  /** Bytes of the dataset received so far. */
  get datasetLength(): number {
    return this.#used - this.headerLength;
  }

  /** Append a fragment of the dataset. */
  write(piece: Uint8Array): void {
    const need = this.#used + piece.byteLength;
    if (need > this.#buf.byteLength) {
      const grown = new Uint8Array(Math.max(need, this.#buf.byteLength * 2));
      grown.set(this.#buf.subarray(0, this.#used));
      this.#buf = grown;
    }
    this.#buf.set(piece, this.#used);
    this.#used = need;
    if (this.spool) this.#flush(false);
  }

  /** The whole Part 10 file (header and dataset); the spool has been given all of it. */
  file(): Uint8Array {
    if (this.spool) this.#flush(true);
    const unused = this.#buf.byteLength - this.#used;
    // Up to 1/8 (and at least 64 KiB) of slack stays; more is not worth holding.
    if (unused > Math.max(this.#buf.byteLength >> 3, 1 << 16)) {
      return this.#buf.slice(0, this.#used);
    }
    return this.#buf.subarray(0, this.#used);
  }

  /** Hand whole slices (and with `all` the rest) to the spool. */
  #flush(all: boolean): void {
    while (this.#used - this.#spooled >= SPOOL_SLICE || (all && this.#used > this.#spooled)) {
      const end = Math.min(this.#spooled + SPOOL_SLICE, this.#used);
      this.spool!.write(this.#buf.subarray(this.#spooled, end));
      this.#spooled = end;
    }
  }
}
