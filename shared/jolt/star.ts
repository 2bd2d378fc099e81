/**
 * `*` wildcard keys: the lone `*`, one star (`tag-*`), two stars (`tag-*-*`) and more
 * (`a-*-*-*`). Each `*` matches one or more characters, as few as possible (JOLT's reluctant
 * `(.+?)`), and the captured parts become `&(n,1)`, `&(n,2)`…  Matching is plain string work:
 * no regular expression runs at apply time.
 */

import { specFail } from "./errors.ts";
import { countMatches, javaSplitLiteral } from "./java.ts";
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

/** Three or more `*`s: a backtracking matcher with the semantics of `^lit(.+?)lit(.+?)…lit$`. */
export class StarMany implements StarMatcher {
  readonly kind = "starRegex";
  readonly canonical: string;
  readonly groupCount: number;
  readonly #lits: string[];

  constructor(key: string) {
    this.canonical = key;
    this.#lits = key.split("*");
    this.groupCount = this.#lits.length;
  }

  stringMatch(s: string): boolean {
    return this.#run(s, null);
  }

  match(key: string): Matched | null {
    const groups: string[] = new Array(this.#lits.length - 1);
    return this.#run(key, groups) ? new Matched(key, groups) : null;
  }

  #run(s: string, groups: string[] | null): boolean {
    const first = this.#lits[0];
    if (!s.startsWith(first)) return false;
    return this.#from(s, first.length, 0, groups);
  }

  #from(s: string, pos: number, g: number, groups: string[] | null): boolean {
    const lits = this.#lits;
    const next = lits[g + 1];
    const lastGroup = g + 2 === lits.length;
    for (let end = pos + 1; end <= s.length; end++) {
      // Java's '.' does not match line terminators.
      if (isLineTerminator(s.charCodeAt(end - 1))) return false;
      if (!s.startsWith(next, end)) continue;
      const after = end + next.length;
      if (lastGroup ? after === s.length : this.#from(s, after, g + 1, groups)) {
        if (groups) groups[g] = s.slice(pos, end);
        return true;
      }
    }
    return false;
  }
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
