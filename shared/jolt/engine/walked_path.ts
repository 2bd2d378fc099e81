/**
 * The stack a spec walk keeps while descending the input: for each level, the input value and the
 * key that matched there (with the parts captured by `*`). `&`, `$`, `#` and `@` read from it.
 */

import { parseJavaInt } from "./java.ts";

/** The result of one key match (JOLT's MatchedElement / ArrayMatchedElement). */
export class Matched {
  /** The whole matched key; `&(n,0)`. */
  readonly key: string;
  /** The parts captured by `*` wildcards; `&(n,1)` is groups[0]. */
  readonly groups: readonly string[] | null;
  /** Size of the array this key indexes before any expansion, or -1 when not an array level. */
  readonly origSize: number;
  /** How many children matched under this level so far (`#n` on the RHS). */
  hashCount = 0;
  /** The key as an array index (-1: not one), parsed once; -2 until asked for. */
  #index = -2;

  constructor(key: string, groups: readonly string[] | null = null, origSize = -1) {
    this.key = key;
    this.groups = groups;
    this.origSize = origSize;
  }

  /** The whole key as a non-negative array index, or -1 when it is not one. */
  keyIndex(): number {
    if (this.#index === -2) {
      const n = parseJavaInt(this.key);
      this.#index = n !== null && n >= 0 ? n : -1;
    }
    return this.#index;
  }

  /** The key (group 0) or a captured part; undefined when there is no such part. */
  subKey(group: number): string | undefined {
    return group === 0 ? this.key : this.groups?.[group - 1];
  }
}

/**
 * A stack of (input value, match) pairs.
 */
export class WalkedPath {
  #refs: unknown[] = [];
  #els: Matched[] = [];
  #size = 0;

  /** Number of levels. */
  get size(): number {
    return this.#size;
  }

  /** Empties the stack (a compiled operation reuses one per apply). */
  reset(): void {
    for (let i = 0; i < this.#size; i++) this.#refs[i] = undefined;
    this.#size = 0;
  }

  /** Pushes a level. */
  push(ref: unknown, m: Matched): void {
    this.#refs[this.#size] = ref;
    this.#els[this.#size] = m;
    this.#size++;
  }

  /** Pops the last level. */
  pop(): void {
    this.#size--;
    this.#refs[this.#size] = undefined;
  }

  /** The match `up` levels above the last one (0 = last); undefined past the root. */
  match(up: number): Matched | undefined {
    return up < this.#size ? this.#els[this.#size - 1 - up] : undefined;
  }

  /** The last match. */
  last(): Matched {
    return this.#els[this.#size - 1];
  }

  /** The input value `up` levels above the last one (0 = last); undefined past the root. */
  ref(up: number): unknown {
    return up < this.#size ? this.#refs[this.#size - 1 - up] : undefined;
  }

  /** True if `up` levels above the last one exist. */
  reaches(up: number): boolean {
    return up < this.#size;
  }

  /** Replaces the input value of the last level (after it was made writable). */
  setLastRef(ref: unknown): void {
    this.#refs[this.#size - 1] = ref;
  }
}

/**
 * Compile-time picture of a walked path: the number of key parts each level offers. Used to
 * reject references such as `&3` or `&(1,2)` that could never resolve.
 */
export type Levels = readonly number[];

const INDEX_KEYS: string[] = Array.from({ length: 1024 }, (_, i) => String(i));

/** The key string of an array index (cached for small indexes). */
export function indexKey(i: number): string {
  return i < 1024 ? INDEX_KEYS[i] : String(i);
}
