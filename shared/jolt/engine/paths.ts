/**
 * JOLT path syntax: single spec keys (the LHS of shift, modify, …) and dot-notation paths (the
 * RHS of shift, the inside of `@(…)`), parsed once into path elements.
 *
 * Key forms: literal, `*` patterns, `&` / `&n` / `&(n,m)` references, `$…`, `#literal`, `@`,
 * `@(n,path)` / `@path` transposes and `[…]` array indexes. A backslash escapes the special
 * characters (`\\@`, `\\$`, `\\.`, `\\*`…), exactly as JOLT's own parser does.
 */

import { specFail } from "./errors.ts";
import { ABSENT, type Absent, getOwn, has, isMap } from "../json.ts";
import {
  countMatches,
  isBlank,
  javaSplitLiteral,
  removeEscapeChars,
  removeEscapedValues,
} from "./java.ts";
import { splitPath } from "./dot_notation.ts";
import {
  AmpElement,
  ArrayElement,
  AtElement,
  DollarElement,
  HashElement,
  LiteralElement,
  type PathElement,
  StarElement,
  TransposeElement,
} from "./path_elements.ts";
import type { Levels, WalkedPath } from "./walked_path.ts";

const readerOf = (text: string) => DotPath.parse(text, false);
/** Parses one spec key the way JOLT's PathElementBuilder does (no `|` handling here). */
export function parseKey(origKey: string): PathElement {
  let inspect = origKey;
  let key = origKey;
  if (origKey.includes("\\")) {
    inspect = removeEscapedValues(origKey);
    key = removeEscapeChars(origKey);
  }
  if (inspect === "@") return new AtElement(key);
  if (inspect === "*") {
    if (key !== "*") specFail(`invalid key "${origKey}"`);
    return new StarElement(key);
  }
  if (inspect.startsWith("[")) return arrayKey(inspect, key, origKey);
  if (inspect.startsWith("@") || inspect.includes("@(")) {
    return TransposeElement.parse(origKey, readerOf);
  }
  if (inspect.includes("@")) {
    specFail(`key "${origKey}" can not have an '@' other than at the front`);
  }
  if (inspect.includes("$")) return new DollarElement(key);
  if (inspect.includes("[")) return arrayKey(inspect, key, origKey);
  if (inspect.includes("&")) {
    if (inspect.includes("*")) specFail(`key "${origKey}" can't mix '*' with '&'`);
    return new AmpElement(key);
  }
  if (inspect.includes("*")) return new StarElement(key);
  if (inspect.includes("#")) return new HashElement(key);
  return new LiteralElement(key);
}

function arrayKey(inspect: string, key: string, origKey: string): ArrayElement {
  if (countMatches(inspect, "[") !== 1 || countMatches(inspect, "]") !== 1) {
    specFail(`key "${origKey}" has too many [] references`);
  }
  return new ArrayElement(key, readerOf);
}

/** Splits `a|b` keys like Java's `split("\\|")` (trailing empty alternatives vanish). */
export function splitOr(key: string): string[] {
  return key.includes("|") ? javaSplitLiteral(key, "|") : [key];
}

/**
 * A parsed dot-notation path such as `rating.&1.value`, `photos[&(0,1)].url` or
 * `@(2,clientId)`. Used to write (shift's output paths) and to read (inside `@(…)`).
 */
export class DotPath {
  /** Canonical form, elements joined with '.'. */
  readonly canonical: string;
  /** Step kind per element: 0 map key, 1 array index, 2 array append. */
  readonly steps: Uint8Array;
  readonly #els: PathElement[];
  readonly #keys: (string | number)[];

  readonly #dynamic: number[] = [];

  private constructor(els: PathElement[]) {
    this.#els = els;
    this.steps = Uint8Array.from(els, (e) => e.step);
    this.canonical = els.map((e) => e.canonical).join(".");
    // Literal keys and explicit indexes are filled in once; only the rest is evaluated per use.
    this.#keys = els.map((e, i) => {
      if (e instanceof LiteralElement) return e.key;
      if (e instanceof ArrayElement && e.type === "explicit") return e.index;
      this.#dynamic.push(i);
      return "";
    });
  }

  /** The elements (for inspection by callers that need one of them). */
  get elements(): readonly PathElement[] {
    return this.#els;
  }

  /**
   * Parses a dot path. `forWrite` prefixes the hidden root step JOLT's writers use, so that
   * an empty path means "the whole output".
   */
  static parse(text: string, forWrite: boolean): DotPath {
    if (
      (text.includes("*") && !text.includes("\\*")) || (text.includes("$") && !text.includes("\\$"))
    ) {
      specFail(`output path can not contain '*' or '$': "${text}"`);
    }
    const full = forWrite ? (isBlank(text) ? "root" : `root.${text}`) : text;
    if (!forWrite && isBlank(text)) specFail(`empty path "${text}"`);
    const pieces = splitPath(full, text);
    if (pieces.length === 0) specFail(`empty path "${text}"`);
    const els = pieces.map((p) => {
      const el = parseKey(p);
      if (el instanceof AtElement) specFail(`'.@.' is not valid in a path: "${text}"`);
      if (!el.evaluatable) specFail(`"${p}" is not valid in a path: "${text}"`);
      return el;
    });
    return new DotPath(els);
  }

  /** Checks references against the compile-time shape of the walked path. */
  validate(levels: Levels): void {
    for (const el of this.#els) el.validate(levels);
  }

  /** Evaluates every step's key; false if one does not resolve (then nothing is written/read). */
  #evaluate(wp: WalkedPath): boolean {
    const els = this.#els;
    const keys = this.#keys;
    const dynamic = this.#dynamic;
    for (let d = 0; d < dynamic.length; d++) {
      const i = dynamic[d];
      const k = els[i].evaluate(wp);
      if (k === null) return false;
      keys[i] = k;
    }
    return true;
  }

  /** Reads the path from `tree` (JOLT's SimpleTraversr GET); ABSENT when not there. */
  read(tree: unknown, wp: WalkedPath): unknown | Absent {
    if (!this.#evaluate(wp)) return ABSENT;
    const els = this.#els;
    const keys = this.#keys;
    const last = els.length - 1;
    let cur = tree;
    for (let i = 0; i <= last; i++) {
      if (cur === null || cur === undefined) return ABSENT;
      if (els[i].step === 0) {
        if (!isMap(cur)) return ABSENT;
        const k = keys[i] as string;
        if (i === last) return has(cur, k) ? cur[k] : ABSENT;
        cur = getOwn(cur, k) ?? null;
      } else {
        if (!Array.isArray(cur)) return ABSENT;
        const idx = keys[i] as number;
        if (idx < 0 || idx >= cur.length) return i === last ? ABSENT : null;
        cur = cur[idx];
      }
    }
    return cur;
  }

  /** The evaluated keys (reused buffer, for writers), or null if one does not resolve. */
  keysFor(wp: WalkedPath): readonly (string | number)[] | null {
    return this.#evaluate(wp) ? this.#keys : null;
  }
}
