/**
 * Open connections per client address in one SharedArrayBuffer, so that the cap on connections
 * per address holds across every data-plane worker listening on the same port.
 *
 * A fixed table of slots `[fingerprint, count]` (float64); an address is looked up within a
 * window of 8 slots from its hash, a slot whose count fell to 0 is free again. When the window
 * of a new address holds 8 live addresses, that connection is let through uncounted (the cap
 * then errs on the side of serving for it) and its release touches nothing. One spin lock (an
 * Int32 word at the start) guards the table; the critical section is a few float operations.
 */

/** Slots looked at for one address. */
const WINDOW = 8;
/** Bytes before the slots: the lock word, padded to the float64 alignment. */
const HEADER = 8;
/** Slots of a table: distinct addresses with open connections it tracks at once. */
export const ADDRESS_SLOTS = 65_536;

/**
 * A 53-bit fingerprint of `text` (two 32-bit multiplicative hashes of its UTF-16 units, mixed);
 * never 0, which marks an empty slot in the shared tables that key by it.
 */
export function fingerprint(text: string): number {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return (2097151 & h2) * 4294967296 + (h1 >>> 0) || 1;
}

/** What `acquire` decided for one new connection. */
export type Admission = "counted" | "refused" | "uncounted";

/** Connection counts per client address, shared by every thread that maps the same buffer. */
export class AddressCounts {
  readonly #lock: Int32Array;
  readonly #slots: Float64Array;
  readonly #count: number;

  /** Bytes of the SharedArrayBuffer of a table of `slots` slots. */
  static bytesFor(slots: number = ADDRESS_SLOTS): number {
    return HEADER + slots * 2 * 8;
  }

  /** The table in `buffer` (zeroed: empty); default a buffer of this thread alone. */
  constructor(buffer = new SharedArrayBuffer(AddressCounts.bytesFor())) {
    this.#count = Math.floor((buffer.byteLength - HEADER) / 16);
    if (this.#count < 1) throw new Error("address counts: the buffer holds no slot");
    this.#lock = new Int32Array(buffer, 0, 1);
    this.#slots = new Float64Array(buffer, HEADER, this.#count * 2);
  }

  /** One more connection from `address`, unless it has `max` open already. */
  acquire(address: string, max: number): Admission {
    const fp = fingerprint(address);
    const slots = this.#slots;
    this.#enter();
    let found = -1;
    let free = -1;
    const start = fp % this.#count;
    const window = this.#count < WINDOW ? this.#count : WINDOW;
    for (let i = 0; i < window; i++) {
      const at = ((start + i) % this.#count) * 2;
      if (slots[at] === fp && slots[at + 1] > 0) {
        found = at;
        break;
      }
      if (free < 0 && slots[at + 1] <= 0) free = at;
    }
    let admission: Admission;
    if (found >= 0) {
      if (slots[found + 1] >= max) admission = "refused";
      else {
        slots[found + 1]++;
        admission = "counted";
      }
    } else if (free >= 0) {
      slots[free] = fp;
      slots[free + 1] = 1;
      admission = max >= 1 ? "counted" : "refused";
      if (admission === "refused") slots[free + 1] = 0;
    } else {
      admission = "uncounted";
    }
    Atomics.store(this.#lock, 0, 0);
    return admission;
  }

  /** A counted connection from `address` closed. */
  release(address: string): void {
    const fp = fingerprint(address);
    const slots = this.#slots;
    this.#enter();
    const start = fp % this.#count;
    const window = this.#count < WINDOW ? this.#count : WINDOW;
    for (let i = 0; i < window; i++) {
      const at = ((start + i) % this.#count) * 2;
      if (slots[at] === fp && slots[at + 1] > 0) {
        slots[at + 1]--;
        break;
      }
    }
    Atomics.store(this.#lock, 0, 0);
  }

  #enter(): void {
    while (Atomics.compareExchange(this.#lock, 0, 0, 1) !== 0) {
      // Another thread is inside for a few float operations.
    }
  }
}
