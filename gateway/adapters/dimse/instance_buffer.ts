/**
 * Assembles a received C-STORE dataset behind the Part 10 header of its instance, so the file is
 * built with one copy of each fragment as it arrives. The expected size (the previous instance on
 * the association: a series is usually one size) is allocated up front; a larger dataset grows the
 * buffer, a much smaller one is copied out so no large buffer is held for a small file.
 */

/** Growing buffer for one instance file. */
export class InstanceBuffer {
  readonly headerLength: number;
  #buf: Uint8Array;
  #used: number;

  /** `header`: the Part 10 preamble and meta group; `expected`: the likely dataset size. */
  constructor(header: Uint8Array, expected: number) {
    this.headerLength = header.byteLength;
    this.#buf = new Uint8Array(header.byteLength + Math.max(expected, 0));
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
  }

  /** The whole Part 10 file (header and dataset). */
  file(): Uint8Array {
    const unused = this.#buf.byteLength - this.#used;
    // Up to 1/8 (and at least 64 KiB) of slack stays; more is not worth holding.
    if (unused > Math.max(this.#buf.byteLength >> 3, 1 << 16)) {
      return this.#buf.slice(0, this.#used);
    }
    return this.#buf.subarray(0, this.#used);
  }
}
