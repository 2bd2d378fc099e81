/**
 * `default` (JOLT's Defaultr): walks the spec and adds what the input lacks. A key is defaulted
 * when missing or null; existing non-null values are never touched. `*` and `a|b` keys only
 * apply to keys already present; `key[]` says the value is an array whose spec keys are indexes.
 */

import { atPath, specFail, SpecIssue, TransformIssue } from "./errors.ts";
import {
  deepCopy,
  deepFreeze,
  describe,
  getOwn,
  has,
  isMap,
  type JsonMap,
  type Ownership,
  setKey,
} from "../json.ts";
import { javaSplitLiteral, parseJavaInt } from "./java.ts";
import { chargeOutput, chargeSteps, MAX_ARRAY_INDEX, padTo, valueCount } from "./limits.ts";

/** Thrown when an array spec key is not an index (the top-level array spec then does not exist). */
class NotAnIndex extends SpecIssue {}

type KeyOp = "literal" | "or" | "star";

/** One spec key (JOLT's MapKey / ArrayKey). */
interface Key {
  readonly rawKey: string;
  readonly op: KeyOp;
  /** The value should be an array (key ended with `[]`); children are then indexes. */
  readonly arrayOutput: boolean;
  /** This key is an index into its parent array. */
  readonly inArray: boolean;
  readonly keyStrings: readonly string[];
  readonly keyInts: readonly number[];
  /** Children sorted by precedence (literals, then `|` keys, then `*`), or null for a leaf. */
  readonly children: readonly Key[] | null;
  /** The default value of a leaf (frozen; copied on write). */
  readonly literal: unknown;
  /** Largest literal child index, or -1. */
  readonly maxIndex: number;
  /** Values in `literal` (charged to the run's output budget at each copy). */
  readonly literalSize: number;
}

const OP_RANK: Record<KeyOp, number> = { literal: 0, or: 1, star: 2 };

function compareKeys(a: Key, b: Key): number {
  const d = OP_RANK[a.op] - OP_RANK[b.op];
  if (d !== 0 || a.op !== "or") return d;
  if (a.keyStrings.length !== b.keyStrings.length) {
    return a.keyStrings.length - b.keyStrings.length;
  }
  return a.rawKey < b.rawKey ? -1 : a.rawKey > b.rawKey ? 1 : 0;
}

function indexOf(s: string): number {
  const n = parseJavaInt(s);
  if (n === null || n < 0) throw new NotAnIndex(`array default keys must be indexes, got "${s}"`);
  // The nulls before the index would all be written (a 90-byte spec made 500 MB).
  if (n > MAX_ARRAY_INDEX) {
    specFail(`array default index ${n} is over the limit of ${MAX_ARRAY_INDEX}`);
  }
  return n;
}

function buildKey(jsonKey: string, spec: unknown, inArray: boolean, path: readonly string[]): Key {
  return atPath(path, () => {
    const arrayOutput = jsonKey.endsWith("[]");
    const rawKey = arrayOutput ? jsonKey.replaceAll("[]", "") : jsonKey;
    let op: KeyOp = "literal";
    if (rawKey.includes("*")) {
      if (rawKey !== "*") {
        specFail(`default key "${rawKey}" is invalid: '*' keys can only contain '*'`);
      }
      op = "star";
    } else if (rawKey.includes("|")) {
      op = "or";
    }
    const keyStrings = op === "or"
      ? javaSplitLiteral(rawKey, "|")
      : op === "literal"
      ? [rawKey]
      : [];
    const keyInts = inArray ? keyStrings.map(indexOf) : [];
    let children: Key[] | null = null;
    let maxIndex = -1;
    if (isMap(spec)) {
      children = Object.keys(spec).map((k) => buildKey(k, spec[k], arrayOutput, [...path, k]));
      children.sort(compareKeys);
      if (arrayOutput) {
        for (const c of children) {
          if (c.op === "literal") maxIndex = Math.max(maxIndex, c.keyInts[0]);
        }
      }
    }
    return {
      rawKey,
      op,
      arrayOutput,
      inArray,
      keyStrings,
      keyInts,
      children,
      literal: children ? null : deepFreeze(deepCopy(spec)),
      maxIndex,
      literalSize: children ? 0 : valueCount(spec),
    };
  });
}

/** A compiled default spec. */
export class DefaultOp {
  readonly #mapRoot: Key;
  readonly #arrayRoot: Key | null;

  constructor(spec: unknown) {
    if (!isMap(spec)) specFail(`default expects a spec object, got ${describe(spec)}`, []);
    this.#mapRoot = buildKey("root", spec, false, []);
    // A top-level array input is handled as if the spec were under "root[]"; that only works
    // when every top-level spec key is an index.
    let arrayRoot: Key | null = null;
    try {
      arrayRoot = buildKey("root[]", spec, false, []);
    } catch (err) {
      if (!(err instanceof NotAnIndex)) throw err;
    }
    this.#arrayRoot = arrayRoot;
  }

  /** Applies the defaults; a null input starts as an empty object. */
  apply(input: unknown, own: Ownership): unknown {
    if (input === null || input === undefined) {
      const root = own.own({} as JsonMap);
      applyChildren(this.#mapRoot, root, own);
      return root;
    }
    if (Array.isArray(input)) {
      if (this.#arrayRoot === null) {
        throw new TransformIssue("the default spec can not handle input that is a top level array");
      }
      const root = own.writable(input);
      applyChildren(this.#arrayRoot, root, own);
      return root;
    }
    if (!isMap(input)) return input;
    const root = own.writable(input);
    applyChildren(this.#mapRoot, root, own);
    return root;
  }
}

/** Applies `key`'s children to `defaultee`, a container we own. */
function applyChildren(key: Key, defaultee: JsonMap | unknown[], own: Ownership): void {
  if (key.arrayOutput && Array.isArray(defaultee)) padTo(defaultee, key.maxIndex + 1, "default");
  for (const child of key.children!) applyChild(child, defaultee, own);
}

function applyChild(key: Key, container: JsonMap | unknown[], own: Ownership): void {
  if (key.inArray) {
    if (!Array.isArray(container)) return; // spec and data disagree: the data wins
    if (key.op === "star") {
      for (let i = 0; i < container.length; i++) applyAt(key, container, i, own);
    } else {
      for (const i of key.keyInts) {
        if (key.op === "literal" || i < container.length) applyAt(key, container, i, own);
      }
    }
  } else {
    if (!isMap(container)) return;
    if (key.op === "star") {
      for (const k of Object.keys(container)) applyAt(key, container, k, own);
    } else {
      for (const k of key.keyStrings) {
        if (key.op === "literal" || has(container, k)) applyAt(key, container, k, own);
      }
    }
  }
}

function applyAt(key: Key, container: JsonMap | unknown[], at: string | number, own: Ownership) {
  chargeSteps(1);
  const isList = Array.isArray(container);
  let value = isList ? container[at as number] : getOwn(container, at as string);
  if (key.children === null) {
    if (value === null || value === undefined) {
      chargeOutput(key.literalSize);
      put(container, at, copyLiteral(key.literal, own));
    }
    return;
  }
  if (value === null || value === undefined) {
    value = own.own(key.arrayOutput ? [] : {});
    put(container, at, value);
  } else if (key.arrayOutput ? Array.isArray(value) : isMap(value)) {
    value = own.writableIn(container, at, value as JsonMap | unknown[]);
  } else {
    return; // a scalar where the spec expects a container: leave it
  }
  applyChildren(key, value as JsonMap | unknown[], own);
}

function put(container: JsonMap | unknown[], at: string | number, v: unknown): void {
  if (Array.isArray(container)) {
    padTo(container, at as number, "default");
    container[at as number] = v;
  } else {
    setKey(container, at as string, v);
  }
}

function copyLiteral(v: unknown, own: Ownership): unknown {
  if (v === null || typeof v !== "object") return v;
  return own.own(deepCopy(v) as object);
}
