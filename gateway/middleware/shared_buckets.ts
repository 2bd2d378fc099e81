/**
 * Token buckets in one SharedArrayBuffer, so that every data-plane worker of the gateway takes
 * from the same buckets (a client's limit holds whichever worker its connection landed on).
 *
 * A fixed table of `max_keys` slots, each `[fingerprint, tokens, at]` as float64. A key's slot is
 * found by its 53-bit fingerprint within a window of 8 slots from its hash; a new key takes an
 * empty slot of the window or, when the window is full, the least recently used one (which then
 * starts again full: this errs on the side of serving, like forgetting a bucket). One spin lock
 * (an Int32 word at the start of the buffer) guards the table: the critical section is a handful
 * of float reads and writes, so workers rarely wait for each other, and never for I/O.
 */

import { fingerprint } from "../../shared/net/mod.ts";

/** Slots looked at for one key. */
const WINDOW = 8;
/** Float64 values per slot: fingerprint, tokens, time of the last update (ms). */
const SLOT = 3;
/** Bytes before the slots: the lock word, padded to the float64 alignment. */
const HEADER = 8;

/** The token buckets of one `rate_limit` middleware, shared by every worker that maps them. */
export class SharedBuckets {
  readonly #lock: Int32Array;
  readonly #slots: Float64Array;
  readonly #count: number;

  /** Bytes of the SharedArrayBuffer that holds `maxKeys` buckets. */
  static bytesFor(maxKeys: number): number {
    return HEADER + Math.max(1, maxKeys) * SLOT * 8;
  }

  /** The table in `buffer` (all zero: empty), made with `bytesFor(maxKeys)` bytes. */
  constructor(buffer: SharedArrayBuffer, maxKeys: number) {
    const count = Math.max(1, maxKeys);
    if (buffer.byteLength < SharedBuckets.bytesFor(count)) {
      throw new Error(`shared buckets: ${buffer.byteLength} bytes cannot hold ${count} keys`);
    }
    this.#lock = new Int32Array(buffer, 0, 1);
    this.#slots = new Float64Array(buffer, HEADER, count * SLOT);
    this.#count = count;
  }

  /**
   * Refills `key`'s bucket to `now` (at `ratePerMs`, up to `burst`) and takes one token when there
   * is one. Returns the tokens the bucket held before taking: at least 1 means the request passes.
   */
  take(key: string, now: number, ratePerMs: number, burst: number): number {
    const fp = fingerprint(key);
    const slots = this.#slots;
    const count = this.#count;
    const window = count < WINDOW ? count : WINDOW;
    const start = fp % count;
    const lock = this.#lock;
    while (Atomics.compareExchange(lock, 0, 0, 1) !== 0) {
      // Another worker is inside: its critical section is a few float operations.
    }
    let slot = -1;
    let empty = -1;
    let oldest = -1;
    for (let i = 0; i < window; i++) {
      const at = ((start + i) % count) * SLOT;
      const held = slots[at];
      if (held === fp) {
        slot = at;
        break;
      }
      if (held === 0) {
        if (empty < 0) empty = at;
      } else if (oldest < 0 || slots[at + 2] < slots[oldest + 2]) {
        oldest = at;
      }
    }
    let tokens: number;
    if (slot >= 0) {
      const elapsed = now - slots[slot + 2];
      tokens = Math.min(burst, slots[slot + 1] + (elapsed > 0 ? elapsed : 0) * ratePerMs);
    } else {
      slot = empty >= 0 ? empty : oldest;
      slots[slot] = fp;
      tokens = burst;
    }
    slots[slot + 1] = tokens >= 1 ? tokens - 1 : tokens;
    slots[slot + 2] = now;
    Atomics.store(lock, 0, 0);
    return tokens;
  }
}
