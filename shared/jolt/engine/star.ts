/**
 * `*` wildcard keys: the lone `*`, one star (`tag-*`), two stars (`tag-*-*`) and more
 * (`a-*-*-*`). Each `*` matches one or more characters, as few as possible (JOLT's reluctant
 * `(.+?)`), and the captured parts become `&(n,1)`, `&(n,2)`…  Matching is plain string work in
 * time linear in the key (no pattern built from the spec runs at apply time); what reads the
 * key charges it to the run's work budget (limits.ts).
 */

import { specFail } from "./errors.ts";
import { countMatches, javaSplitLiteral } from "./java.ts";
import { chargeSteps, scanSteps } from "./limits.ts";
import { Matched, type WalkedPath } from "./walked_path.ts";

/** A key pattern with `*` wildcards. */
export interface StarMatcher {
  /** "starAll" | "starSingle" | "starDouble" | "starRegex" (precedence order, last first). */
  readonly kind: StarKind;
  /** The key as written (after escapes are resolved). */
  readonly canonical: string;
  /** Key parts a match offers: the whole key plus one per `*`. */
  readonly groupCount: number;
  /** True if the pattern matches `s`. */
  stringMatch(s: string): boolean;
  /** The match for `key`, or null. */
  match(key: string, wp: WalkedPath): Matched | null;
}

/** Star pattern flavours, named after JOLT's path element classes. */
export type StarKind = "starAll" | "starSingle" | "starDouble" | "starRegex";

/** The lone `*`: matches every key; under an array level it keeps the array's original size. */
export class StarAll implements StarMatcher {
  readonly kind = "starAll";
  readonly canonical = "*";
  readonly groupCount = 1;

  stringMatch(): boolean {
    return true;
  }

  match(key: string, wp: WalkedPath): Matched {
    const origSize = wp.last().origSize;
    return new Matched(key, null, origSize);
  }
}

/** One `*` with literal text around it. */
export class StarSingle implements StarMatcher {
  readonly kind = "starSingle";
  readonly canonical: string;
  readonly groupCount = 2;
  readonly #prefix: string;
  readonly #suffix: string;

  constructor(key: string) {
    if (countMatches(key, "*") !== 1) specFail(`key "${key}" should have exactly one '*'`);
    this.canonical = key;
    const star = key.indexOf("*");
    this.#prefix = key.slice(0, star);
    this.#suffix = key.slice(star + 1);
  }

  stringMatch(s: string): boolean {
    return s.length > this.#prefix.length + this.#suffix.length && s.startsWith(this.#prefix) &&
      s.endsWith(this.#suffix);
  }

  match(key: string): Matched | null {
    if (!this.stringMatch(key)) return null;
    return new Matched(key, [key.slice(this.#prefix.length, key.length - this.#suffix.length)]);
  }
}

/** Two `*`s: prefix, the first occurrence of the middle text, suffix (JOLT's exact algorithm). */
export class StarDouble implements StarMatcher {
  readonly kind = "starDouble";
  readonly canonical: string;
  readonly groupCount = 3;
  readonly #prefix: string;
  readonly #mid: string;
  readonly #suffix: string;

  constructor(key: string) {
    if (countMatches(key, "*") !== 2) specFail(`key "${key}" should have exactly two '*'`);
    this.canonical = key;
    // Java's String.split drops trailing empty parts, which decides where the middle text is.
    const split = javaSplitLiteral(key, "*");
    const startsWithStar = key.startsWith("*");
    const endsWithStar = key.endsWith("*");
    const midIdx = 1;
    const sufIdx = 2;
    if (split.length <= midIdx || (!endsWithStar && split.length <= sufIdx)) {
      specFail(`key "${key}" is not a valid two-star pattern`);
    }
    this.#prefix = startsWithStar ? "" : split[0];
    this.#mid = split[midIdx];
    this.#suffix = endsWithStar ? "" : split[sufIdx];
  }

  stringMatch(s: string): boolean {
    return s.startsWith(this.#prefix) && s.endsWith(this.#suffix) && this.#midIndex(s) > 0;
  }

  // The middle text must start at least one char after the prefix and end at least one char
  // before the suffix; the first such occurrence wins (non-greedy).
  #midIndex(s: string): number {
    chargeSteps(scanSteps(s.length));
    const start = this.#prefix.length + 1;
    const end = s.length - this.#suffix.length - 1;
    if (start >= end) return -1;
    const i = s.slice(start, end).indexOf(this.#mid);
    return i >= 0 ? i + start : -1;
  }

  match(key: string): Matched | null {
    if (!this.stringMatch(key)) return null;
    const midStart = this.#midIndex(key);
    return new Matched(key, [
      key.slice(this.#prefix.length, midStart),
      key.slice(midStart + this.#mid.length, key.length - this.#suffix.length),
    ]);
  }
}

/** Java's line terminators, which `.` (a group's character) does not match. */
const LINE_TERMINATOR = /[\n\r\u0085\u2028\u2029]/;

/** Table cells (times literal characters) per work step; measured, see limits.ts. */
const CELLS_PER_STEP = 8;

/**
 * Three or more `*`s, with the semantics of `^lit(.+?)lit(.+?)…lit$`: each group takes the
 * fewest characters (never a line terminator, as Java's `.`) that still let the rest match.
 *
 * A backtracking matcher takes exponential time on keys such as `aaaa…` against `*a*a*a*…b`
 * (a 1.2 KB spec froze the cloud for seconds), and a table of every group and position is
 * polynomial (100 keys of 200 stars against 20,000-character keys: 35 s). So the usual key, one
 * without line terminators, is matched greedily: each literal at its first occurrence after the
 * previous one (and one character), the last one at the end. Placing a literal earlier never
 * loses a match when every character may sit in a group, and the earliest ends are exactly the
 * reluctant captures; that is O(key length + literal lengths). A key with a line terminator can
 * match only when a literal holds one too (the terminator cannot sit in a group); then the table
 * decides, and its size is charged to the run's work budget before it is built.
 */
export class StarMany implements StarMatcher {
  readonly kind = "starRegex";
  readonly canonical: string;
  readonly groupCount: number;
  readonly #lits: string[];
  /** True when a literal holds a line terminator. */
  readonly #litBreaks: boolean;
  /** The longest literal (what one table cell may compare). */
  readonly #litMax: number;

  constructor(key: string) {
    this.canonical = key;
    this.#lits = key.split("*");
    this.groupCount = this.#lits.length;
    this.#litBreaks = LINE_TERMINATOR.test(key);
    this.#litMax = Math.max(...this.#lits.map((l) => l.length));
  }

  stringMatch(s: string): boolean {
    return this.#ends(s) !== null;
  }

  match(key: string): Matched | null {
    const ends = this.#ends(key);
    if (!ends) return null;
    const groups: string[] = [];
    let pos = this.#lits[0].length;
    ends.forEach((end, g) => {
      groups.push(key.slice(pos, end));
      pos = end + this.#lits[g + 1].length;
    });
    return new Matched(key, groups);
  }

  /** Where each group ends (exclusive), or null when `s` does not match. */
  #ends(s: string): number[] | null {
    const lits = this.#lits;
    if (!s.startsWith(lits[0]) || !s.endsWith(lits[lits.length - 1])) return null;
    // The terminator scan and the literal searches read the key about once.
    chargeSteps(scanSteps(s.length) + lits.length);
    if (!LINE_TERMINATOR.test(s)) return this.#greedy(s);
    return this.#litBreaks ? this.#table(s) : null;
  }

  /** The reluctant ends for a key without line terminators. */
  #greedy(s: string): number[] | null {
    const lits = this.#lits;
    const groups = lits.length - 1;
    const tailStart = s.length - lits[groups].length;
    const ends: number[] = [];
    let pos = lits[0].length;
    for (let g = 0; g < groups - 1; g++) {
      const lit = lits[g + 1];
      const at = s.indexOf(lit, pos + 1); // a group takes at least one character
      // The last group needs a character before the last literal; a later occurrence of this
      // literal would leave it even less room.
      if (at < 0 || at + lit.length >= tailStart) return null;
      ends.push(at);
      pos = at + lit.length;
    }
    if (tailStart - pos < 1) return null;
    ends.push(tailStart);
    return ends;
  }

  /**
   * The reluctant ends by table: first, right to left, for every group and position the nearest
   * end at which the rest of the pattern can still match, then each group's end left to right.
   * O(groups × key length × literal length), charged up front.
   */
  #table(s: string): number[] | null {
    const lits = this.#lits;
    const groups = lits.length - 1;
    const n = s.length;
    chargeSteps(Math.ceil((groups * (n + 2) * Math.max(1, this.#litMax)) / CELLS_PER_STEP));
    // stop[i]: the first line terminator at or after i (n when none): a group starting at i
    // ends at most there.
    const stop = new Int32Array(n + 2);
    stop[n] = n;
    stop[n + 1] = n;
    for (let i = n - 1; i >= 0; i--) stop[i] = isLineTerminator(s.charCodeAt(i)) ? i : stop[i + 1];
    // next[g][i]: the smallest end e >= i at which group g may end (the literal after it starts
    // at e and groups g+1… can match after it), or n+1 when there is none.
    const NONE = n + 1;
    const next: Int32Array[] = new Array(groups);
    for (let g = groups - 1; g >= 0; g--) {
      const lit = lits[g + 1];
      const row = new Int32Array(n + 2);
      row[n + 1] = NONE;
      for (let e = n; e >= 0; e--) {
        let good = false;
        if (s.startsWith(lit, e)) {
          const after = e + lit.length;
          good = g === groups - 1 ? after === n : canStart(next[g + 1], stop, after, NONE);
        }
        row[e] = good ? e : row[e + 1];
      }
      next[g] = row;
    }
    const ends: number[] = [];
    let pos = lits[0].length;
    for (let g = 0; g < groups; g++) {
      if (!canStart(next[g], stop, pos, NONE)) return null;
      const end = next[g][pos + 1];
      ends.push(end);
      pos = end + lits[g + 1].length;
    }
    return ends;
  }
}

/** True when a group starting at `pos` can end somewhere allowed by `row` (at least one char). */
function canStart(row: Int32Array, stop: Int32Array, pos: number, none: number): boolean {
  if (pos + 1 > none - 1) return false;
  const end = row[pos + 1];
  return end !== none && end <= stop[pos];
}

function isLineTerminator(c: number): boolean {
  return c === 10 || c === 13 || c === 0x85 || c === 0x2028 || c === 0x2029;
}

/** Builds the matcher for a key containing `*` (after escapes are resolved). */
export function starMatcher(key: string): StarMatcher {
  if (key === "*") return new StarAll();
  const n = countMatches(key, "*");
  if (n === 1) return new StarSingle(key);
  if (n === 2) return new StarDouble(key);
  return new StarMany(key);
}

/** Precedence rank among computed keys (lower runs first), per JOLT's ordering. */
export const STAR_RANK: Record<StarKind, number> = {
  starRegex: 2,
  starDouble: 3,
  starSingle: 4,
  starAll: 5,
};
