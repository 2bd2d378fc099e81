/**
 * Path elements: one parsed spec key each (JOLT's PathElement classes). On the LHS they match
 * input keys; on the RHS (and inside `@(…)`) they evaluate to the key to write or read. They only
 * look things up at apply time: all parsing happens when the spec is compiled.
 */

import { specFail } from "./errors.ts";
import { ABSENT, type Absent } from "../json.ts";
import { intValue, parseJavaInt } from "./java.ts";
import { checkRef, parseGroupRef, parseHashRef, type Ref } from "./references.ts";
import { type StarMatcher, starMatcher } from "./star.ts";
import { type Levels, Matched, type WalkedPath } from "./walked_path.ts";

/** Reads a sub-path below a value (DotPath; passed in so that this module has no cycle). */
export interface PathReader {
  readonly canonical: string;
  read(tree: unknown, wp: WalkedPath): unknown | Absent;
  validate(levels: Levels): void;
  /** The path's steps (0: an object key, 1: an array index), for reading it over the tape. */
  readonly steps: ArrayLike<number>;
  /** The path's keys evaluated against `wp`, or null when one does not resolve. */
  keysFor(wp: WalkedPath): readonly (string | number)[] | null;
}

/** Parses the path inside `@(n,path)`. */
export type ReaderParser = (text: string) => PathReader;

/** A parsed key. `match` is for LHS use, `evaluate` for RHS use; unsupported ones throw. */
export abstract class PathElement {
  /** Element class, used for precedence and validation. */
  abstract readonly kind: ElementKind;
  /** Fully expanded form (duplicate detection and ordering use it). */
  abstract readonly canonical: string;
  /** Map step (0), array index step (1) or array append step (2) when used in a path. */
  step: 0 | 1 | 2 = 0;
  /** True if the element can be evaluated on the RHS. */
  readonly evaluatable: boolean = true;

  /** LHS: the match for an input key, or null. */
  abstract match(key: string, wp: WalkedPath): Matched | null;
  /** RHS: the key this element stands for now (array index for array steps), or null. */
  abstract evaluate(wp: WalkedPath): string | number | null;
  /** Key parts a match offers, given the parts of the parent level. */
  groupCount(_parentGroups: number): number {
    return 1;
  }
  /** Checks references against the compile-time shape of the walked path. */
  validate(_levels: Levels): void {}
}

/** Element classes (JOLT's PathElement subclasses). */
export type ElementKind =
  | "literal"
  | "star"
  | "amp"
  | "array"
  | "at"
  | "dollar"
  | "hash"
  | "transpose";

/** A plain key. */
export class LiteralElement extends PathElement {
  readonly kind = "literal";
  readonly canonical: string;
  readonly key: string;

  constructor(key: string) {
    super();
    this.key = key;
    this.canonical = key.replaceAll(".", "\\.");
    this.#matched = new Matched(key);
  }

  // One Matched per literal spec node is enough: a node is never active twice at once (it
  // sits at a fixed depth of the spec tree), so it is recycled with its count reset.
  readonly #matched: Matched;

  match(key: string): Matched | null {
    if (key !== this.key) return null;
    const m = this.#matched;
    m.hashCount = 0;
    return m;
  }

  evaluate(): string {
    return this.key;
  }
}

/** A key with `*` wildcards (LHS only). */
export class StarElement extends PathElement {
  readonly kind = "star";
  readonly canonical: string;
  override readonly evaluatable = false;
  readonly star: StarMatcher;

  constructor(key: string) {
    super();
    this.star = starMatcher(key);
    this.canonical = this.star.canonical;
  }

  match(key: string, wp: WalkedPath): Matched | null {
    return this.star.match(key, wp);
  }

  evaluate(): null {
    return null;
  }

  override groupCount(): number {
    return this.star.groupCount;
  }
}

/** Text with `&` references mixed in, like `photo-&(1,1)-url`. */
export class AmpElement extends PathElement {
  readonly kind = "amp";
  readonly canonical: string;
  readonly #tokens: (string | Ref)[] = [];
  readonly #raw: string;

  constructor(key: string) {
    super();
    this.#raw = key;
    let literal = "";
    let canonical = "";
    let i = 0;
    while (i < key.length) {
      const c = key[i];
      if (c === "&") {
        if (literal.length > 0) {
          this.#tokens.push(literal);
          canonical += literal;
          literal = "";
        }
        let end = i + 1;
        while (end < key.length && isRefChar(key.charCodeAt(end))) end++;
        const ref = parseGroupRef(key.slice(i, end), "&");
        this.#tokens.push(ref);
        canonical += `&(${ref.up},${ref.group})`;
        i = end;
      } else {
        literal += c;
        i++;
      }
    }
    if (literal.length > 0) {
      this.#tokens.push(literal);
      canonical += literal;
    }
    this.canonical = canonical;
  }

  /** Literal text and references, in order (for the shift compiler). */
  get tokens(): readonly (string | Ref)[] {
    return this.#tokens;
  }

  match(key: string, wp: WalkedPath): Matched | null {
    return this.evaluate(wp) === key ? new Matched(key) : null;
  }

  evaluate(wp: WalkedPath): string | null {
    const tokens = this.#tokens;
    if (tokens.length === 1) {
      return typeof tokens[0] === "string" ? tokens[0] : subKey(wp, tokens[0]);
    }
    let out = "";
    for (const t of tokens) {
      if (typeof t === "string") {
        out += t;
      } else {
        const v = subKey(wp, t);
        if (v === null) return null;
        out += v;
      }
    }
    return out;
  }

  override validate(levels: Levels): void {
    for (const t of this.#tokens) if (typeof t !== "string") checkRef(t, levels, this.#raw);
  }
}

function isRefChar(c: number): boolean {
  return (c >= 48 && c <= 57) || c === 40 || c === 41 || c === 44; // digits ( ) ,
}

function subKey(wp: WalkedPath, r: Ref): string | null {
  return wp.match(r.up)?.subKey(r.group) ?? null;
}

/** Sentinel index: append (`[]`). */
export const APPEND = -2;

/** `[]`, `[3]`, `[&1]`, `[#2]`, `[@(1,idx)]`: an array step. */
export class ArrayElement extends PathElement {
  readonly kind = "array";
  readonly canonical: string;
  readonly type: "append" | "explicit" | "hash" | "ref" | "transpose";
  /** For explicit indexes: the index and its text as written. */
  readonly index: number = -1;
  readonly indexText: string = "";
  readonly #ref: Ref | null = null;
  readonly #hashUp: number = 0;
  readonly #transpose: TransposeElement | null = null;
  readonly #raw: string;

  constructor(key: string, parseReader: ReaderParser) {
    super();
    this.#raw = key;
    if (key[0] !== "[" || key[key.length - 1] !== "]") specFail(`invalid array key "${key}"`);
    if (key.length === 2) {
      this.type = "append";
      this.canonical = "[]";
      this.step = 2;
      return;
    }
    this.step = 1;
    const meat = key.slice(1, -1);
    const first = meat[0];
    if (first === "&") {
      this.type = "ref";
      this.#ref = parseGroupRef(meat, "&");
      this.canonical = `[&(${this.#ref.up},${this.#ref.group})]`;
    } else if (first === "#") {
      this.type = "hash";
      this.#hashUp = parseHashRef(meat);
      this.canonical = `[#${this.#hashUp}]`;
    } else if (first === "@") {
      this.type = "transpose";
      this.#transpose = TransposeElement.parse(meat, parseReader);
      this.canonical = `[${this.#transpose.canonical}]`;
    } else {
      const n = parseJavaInt(meat);
      if (n === null || n < 0) specFail(`bad explicit array index "${meat}" in key "${key}"`);
      this.type = "explicit";
      this.index = n;
      this.indexText = meat;
      this.canonical = `[${meat}]`;
    }
  }

  /** The lookup of a `[@(…)]` element (for the shift compiler). */
  get transpose(): TransposeElement | null {
    return this.#transpose;
  }

  /** The `&` reference of a `[&…]` element (for the shift compiler). */
  get ref(): Ref | null {
    return this.#ref;
  }

  /** How many levels up a `[#n]` element counts matches (for the shift compiler). */
  get hashUp(): number {
    return this.#hashUp;
  }

  /** Index to read/write at, APPEND for `[]`, or null when it does not resolve to one. */
  evaluate(wp: WalkedPath): number | null {
    switch (this.type) {
      case "append":
        return APPEND;
      case "explicit":
        return this.index;
      case "hash": {
        const m = wp.match(this.#hashUp);
        return m ? m.hashCount : null;
      }
      case "ref": {
        const ref = this.#ref!;
        if (ref.group !== 0) return nonNegativeIndex(subKey(wp, ref));
        const m = wp.match(ref.up);
        if (m === undefined) return null;
        const index = m.keyIndex();
        return index >= 0 ? index : null;
      }
      case "transpose":
        return nonNegativeIndex(this.#transpose!.evaluate(wp));
    }
  }

  /** LHS use (modify, cardinality): matches `[n]` only under an array level. */
  match(key: string, wp: WalkedPath): Matched | null {
    const text = this.type === "explicit" ? this.indexText : this.evaluate(wp);
    if (text === null || String(text) !== key) return null;
    const origSize = wp.last().origSize;
    return origSize >= 0 ? new Matched(key, null, origSize) : null;
  }

  override validate(levels: Levels): void {
    if (this.#ref) checkRef(this.#ref, levels, this.#raw);
    if (this.type === "hash" && this.#hashUp >= levels.length) {
      specFail(
        `reference "${this.#raw}" goes ${this.#hashUp} levels up, but only ${
          levels.length - 1
        } exist`,
      );
    }
    this.#transpose?.validate(levels);
  }
}

function nonNegativeIndex(s: string | null): number | null {
  if (s === null) return null;
  const n = parseJavaInt(s);
  return n !== null && n >= 0 ? n : null;
}

/** The lone `@` (LHS): the value of the parent level itself. */
export class AtElement extends PathElement {
  readonly kind = "at";
  readonly canonical = "@";
  override readonly evaluatable = false;

  constructor(key: string) {
    super();
    if (key !== "@") specFail(`'@' key can only be a single '@', got "${key}"`);
  }

  match(_key: string, wp: WalkedPath): Matched {
    return wp.last();
  }

  evaluate(): null {
    return null;
  }

  override groupCount(parentGroups: number): number {
    return parentGroups;
  }
}

/** `$`, `$1`, `$(1,2)` (LHS): the key at some level, used as data. */
export class DollarElement extends PathElement {
  readonly kind = "dollar";
  readonly canonical: string;
  readonly #ref: Ref;
  readonly #raw: string;

  constructor(key: string) {
    super();
    this.#raw = key;
    this.#ref = parseGroupRef(key, "$");
    this.canonical = `$(${this.#ref.up},${this.#ref.group})`;
  }

  /** The key reference (for the shift compiler). */
  get ref(): Ref {
    return this.#ref;
  }

  evaluate(wp: WalkedPath): string | null {
    return subKey(wp, this.#ref);
  }

  match(_key: string, wp: WalkedPath): Matched | null {
    const v = this.evaluate(wp);
    return v === null ? null : new Matched(v);
  }

  override validate(levels: Levels): void {
    checkRef(this.#ref, levels, this.#raw);
  }
}

/** `#literal` / `#(literal)` (LHS): a constant to write. */
export class HashElement extends PathElement {
  readonly kind = "hash";
  readonly canonical: string;
  override readonly evaluatable = false;
  readonly value: string;

  constructor(key: string) {
    super();
    if (!key.startsWith("#")) specFail(`'#' key should start with a '#': "${key}"`);
    if (key.length <= 1) specFail(`'#' key is too short: "${key}"`);
    if (key[1] === "(") {
      if (!key.endsWith(")")) specFail(`'#' key has mismatched parens: "${key}"`);
      this.value = key.slice(2, -1);
    } else {
      this.value = key.slice(1);
    }
    this.canonical = `#(${this.value})`;
  }

  match(): Matched {
    return new Matched(this.value);
  }

  evaluate(): null {
    return null;
  }
}

/** A looked-up value as a key: strings as they are, numbers truncated to ints, booleans spelled. */
export function keyOf(v: unknown): string | null {
  if (typeof v === "string") return v;
  if (typeof v === "number") return String(intValue(v));
  if (typeof v === "boolean") return v ? "true" : "false";
  return null;
}

/** `@(n,path)`, `@n`, `@path`: data found by going n levels up, then down `path`. */
export class TransposeElement extends PathElement {
  readonly kind = "transpose";
  readonly canonical: string;
  readonly up: number;
  readonly reader: PathReader | null;

  private constructor(up: number, subPath: string | null, parseReader: ReaderParser) {
    super();
    this.up = up;
    if (subPath === null || subPath.length === 0) {
      this.reader = null;
      this.canonical = `@(${up},)`;
    } else {
      this.reader = parseReader(subPath);
      this.canonical = `@(${up},${this.reader.canonical})`;
    }
  }

  /** Parses a key that starts with `@` (the whole key, escapes included). */
  static parse(key: string, parseReader: ReaderParser): TransposeElement {
    if (key.length < 2) specFail(`'@' transpose key "${key}" is too short`);
    if (key[0] !== "@") specFail(`transpose key must start with '@': "${key}"`);
    let meat = key.slice(1);
    if (meat.includes("@")) specFail(`'@' path element can not contain a nested '@': "${key}"`);
    if (meat.includes("*") || meat.includes("[]")) {
      specFail(`'@' path element can not contain wildcards ('*' or '[]'): "${key}"`);
    }
    if (meat.startsWith("(")) {
      if (!meat.endsWith(")")) specFail(`'@(' without a matching ')': "${key}"`);
      meat = meat.slice(1, -1);
    }
    if (meat.length === 0) specFail(`empty '@()' path element: "${key}"`);
    const c0 = meat.charCodeAt(0);
    if (c0 < 48 || c0 > 57) return new TransposeElement(0, meat, parseReader);
    for (let i = 1; i < meat.length; i++) {
      const c = meat.charCodeAt(i);
      if (c === 44 /* , */) {
        return new TransposeElement(Number(meat.slice(0, i)), meat.slice(i + 1), parseReader);
      }
      if (c < 48 || c > 57) specFail(`'@' path element with a non-numeric level: "${key}"`);
    }
    return new TransposeElement(Number(meat), null, parseReader);
  }

  /** The data found (any JSON value), or ABSENT. */
  lookup(wp: WalkedPath): unknown | Absent {
    if (!wp.reaches(this.up)) return ABSENT;
    const tree = wp.ref(this.up);
    return this.reader === null ? tree : this.reader.read(tree, wp);
  }

  /** RHS use: the data coerced to a key (numbers truncated to ints, booleans spelled out). */
  evaluate(wp: WalkedPath): string | null {
    return keyOf(this.lookup(wp));
  }

  /** LHS use: always "matches", as the parent level (the data is looked up separately). */
  match(_key: string, wp: WalkedPath): Matched {
    return wp.last();
  }

  override groupCount(parentGroups: number): number {
    return parentGroups;
  }

  override validate(levels: Levels): void {
    if (this.up >= levels.length) {
      specFail(
        `'${this.canonical}' goes ${this.up} levels up, but only ${levels.length - 1} exist`,
      );
    }
    this.reader?.validate(levels);
  }
}
