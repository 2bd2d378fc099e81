/** The QPACK dynamic table (RFC 9204 §3.2) as a decoder keeps it: absolute indexes, eviction. */
import { connectionError, H3 } from "./errors.ts";

/** One dynamic table entry. */
export interface TableEntry {
  name: string;
  value: string;
  /** name length + value length + 32 (octets; names and values are Latin-1 strings). */
  size: number;
}

/** Size of an entry as RFC 9204 §3.2.1 counts it. */
export function entrySize(name: string, value: string): number {
  return name.length + value.length + 32;
}

/** A dynamic table bounded by the capacity the encoder sets (at most our maximum). */
export class DynamicTable {
  readonly maxCapacity: number;
  #capacity = 0;
  #size = 0;
  /** Entries oldest first; `#dropped` entries were evicted before `#entries[0]`. */
  #entries: TableEntry[] = [];
  #dropped = 0;

  constructor(maxCapacity: number) {
    this.maxCapacity = maxCapacity;
  }

  /** Number of insertions so far (the Insert Count). */
  get insertCount(): number {
    return this.#dropped + this.#entries.length;
  }

  /** Current size in bytes. */
  get size(): number {
    return this.#size;
  }

  /** Current capacity set by the encoder. */
  get capacity(): number {
    return this.#capacity;
  }

  /** `floor(MaxTableCapacity / 32)` (RFC 9204 §4.5.1.1). */
  get maxEntries(): number {
    return Math.floor(this.maxCapacity / 32);
  }

  /** Set Dynamic Table Capacity; above our maximum is QPACK_ENCODER_STREAM_ERROR. */
  setCapacity(capacity: number): void {
    if (capacity > this.maxCapacity) {
      throw connectionError(
        H3.QPACK_ENCODER_STREAM_ERROR,
        `dynamic table capacity ${capacity} exceeds our maximum of ${this.maxCapacity}`,
      );
    }
    this.#capacity = capacity;
    this.#evictTo(capacity);
  }

  /** Insert an entry, evicting the oldest ones to make room. */
  insert(name: string, value: string): void {
    const size = entrySize(name, value);
    if (size > this.#capacity) {
      throw connectionError(
        H3.QPACK_ENCODER_STREAM_ERROR,
        `entry of ${size} bytes does not fit the dynamic table capacity of ${this.#capacity}`,
      );
    }
    this.#evictTo(this.#capacity - size);
    this.#entries.push({ name, value, size });
    this.#size += size;
  }

  /** The entry at an absolute index, or undefined when evicted or not yet inserted. */
  get(absolute: number): TableEntry | undefined {
    const i = absolute - this.#dropped;
    return i >= 0 && i < this.#entries.length ? this.#entries[i] : undefined;
  }

  #evictTo(limit: number): void {
    while (this.#size > limit && this.#entries.length) {
      const e = this.#entries.shift()!;
      this.#size -= e.size;
      this.#dropped++;
    }
  }
}
