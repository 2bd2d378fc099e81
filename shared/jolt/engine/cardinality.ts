/**
 * `cardinality` (JOLT's CardinalityTransform): makes values single (`"ONE"`: a list becomes its
 * first element) or plural (`"MANY"`: a non-list becomes a one-element list, null becomes `[]`).
 * Keys are literals or `*` patterns; `"@": "ONE"|"MANY"` adjusts the parent value itself before
 * its children are visited.
 */

import { atPath, specFail } from "./errors.ts";
import { describe, isContainer, isMap, type JsonMap, type Ownership, setKey } from "../json.ts";
import { countMatches, javaToString, parseJavaInt } from "./java.ts";
import { StarAll, StarMany, type StarMatcher, StarSingle } from "./star.ts";
import { Matched, WalkedPath } from "./walked_path.ts";
import { chargeSteps } from "./limits.ts";

type Relation = "ONE" | "MANY";

/** A cardinality key: literal text, a star pattern, or `@` (no escapes, as in JOLT). */
interface CardKey {
  readonly raw: string;
  readonly at: boolean;
  readonly star: StarMatcher | null;
}

function parseCardKey(key: string): CardKey {
  if (key.includes("@")) {
    if (key !== "@") specFail(`'@' key can only be a single '@', got "${key}"`);
    return { raw: key, at: true, star: null };
  }
  if (key === "*") return { raw: key, at: false, star: new StarAll() };
  if (key.includes("*")) {
    const star = countMatches(key, "*") === 1 ? new StarSingle(key) : new StarMany(key);
    return { raw: key, at: false, star };
  }
  return { raw: key, at: false, star: null };
}

function matchKey(k: CardKey, key: string, wp: WalkedPath): Matched | null {
  if (k.at) return wp.last();
  if (k.star) return k.star.match(key, wp);
  return key === k.raw ? new Matched(key) : null;
}

interface State {
  readonly own: Ownership;
}

interface CardNode {
  readonly key: CardKey;
  apply(inputKey: string, input: unknown, wp: WalkedPath, parent: unknown, st: State): boolean;
}

class CardLeaf implements CardNode {
  readonly key: CardKey;
  readonly #relation: Relation;

  constructor(key: string, rhs: unknown) {
    this.key = parseCardKey(key);
    if (rhs !== "ONE" && rhs !== "MANY") {
      specFail(`invalid cardinality ${JSON.stringify(rhs)}: expected "ONE" or "MANY"`);
    }
    this.#relation = rhs;
  }

  apply(inputKey: string, input: unknown, wp: WalkedPath, parent: unknown, st: State): boolean {
    if (matchKey(this.key, inputKey, wp) === null) return false;
    this.adjust(inputKey, input, parent, st);
    return true;
  }

  /** Changes `parent[inputKey]`; returns the new value (null when nothing changed for ONE). */
  adjust(inputKey: string, input: unknown, parent: unknown, st: State): unknown {
    if (this.#relation === "MANY") {
      if (Array.isArray(input)) return input;
      const value = input === null || input === undefined ? st.own.own([]) : st.own.own([input]);
      // JOLT removes and re-adds the key, so in an object it moves to the end.
      if (isMap(parent) && input !== null) delete parent[inputKey];
      put(parent, inputKey, value);
      return value;
    }
    if (!Array.isArray(input)) return null;
    const value = input.length > 0 ? input[0] : null;
    put(parent, inputKey, value);
    return value;
  }
}

function put(parent: unknown, key: string, value: unknown): void {
  if (isMap(parent)) {
    setKey(parent, key, value);
  } else if (Array.isArray(parent)) {
    const i = parseJavaInt(key);
    if (i !== null && i >= 0 && i < parent.length) parent[i] = value;
  }
}

class CardComposite implements CardNode {
  readonly key: CardKey;
  readonly #literals = new Map<string, CardNode>();
  readonly #computed: CardNode[] = [];
  #special: CardLeaf | null = null;

  constructor(key: string, spec: JsonMap, path: readonly string[]) {
    this.key = parseCardKey(key);
    if (this.key.at) specFail("'@' cardinality key can not have children");
    const seen = new Set<string>();
    for (const k of Object.keys(spec)) {
      const rhs = spec[k];
      const childPath = [...path, k];
      const child: CardNode = atPath(
        childPath,
        () => isMap(rhs) ? new CardComposite(k, rhs, childPath) : new CardLeaf(k, rhs),
      );
      if (seen.has(k)) specFail(`duplicate key "${k}"`, childPath);
      seen.add(k);
      // As in JOLT, every child is also reachable as a literal of its raw key.
      this.#literals.set(k, child);
      if (child.key.at) this.#special = child as CardLeaf;
      else if (child.key.star) this.#computed.push(child);
    }
    if (seen.size === 0) specFail("a cardinality key with an empty {} as value is not valid");
    this.#computed.sort((a, b) => {
      const ca = a.key.raw;
      const cb = b.key.raw;
      if (ca.length !== cb.length) return cb.length - ca.length;
      return ca < cb ? -1 : ca > cb ? 1 : 0;
    });
  }

  apply(inputKey: string, input: unknown, wp: WalkedPath, parent: unknown, st: State): boolean {
    const m = matchKey(this.key, inputKey, wp);
    if (m === null) return false;
    wp.push(input, m);
    if (this.#special) {
      // "@" may replace the value this key points at; JOLT then continues with the new value.
      input = this.#special.adjust(inputKey, input, parent, st);
    }
    if (isContainer(input) && !st.own.owns(input) && isContainer(parent)) {
      input = st.own.writable(input);
      put(parent, inputKey, input);
    }
    this.#process(input, wp, st);
    wp.pop();
    return true;
  }

  #process(input: unknown, wp: WalkedPath, st: State): void {
    if (isMap(input)) {
      for (const [k, v] of Object.entries(input)) this.#applyKey(k, v, wp, input, st);
    } else if (Array.isArray(input)) {
      for (let i = 0; i < input.length; i++) this.#applyKey(String(i), input[i], wp, input, st);
    } else if (input !== null && input !== undefined) {
      const scalar = javaToString(input);
      this.#applyKey(scalar, null, wp, scalar, st);
    }
  }

  #applyKey(key: string, value: unknown, wp: WalkedPath, container: unknown, st: State): void {
    chargeSteps(1);
    const literal = this.#literals.get(key);
    if (literal) {
      literal.apply(key, value, wp, container, st);
      return;
    }
    for (const c of this.#computed) {
      chargeSteps(1);
      if (c.apply(key, value, wp, container, st)) return;
    }
  }
}

/** A compiled cardinality spec. */
export class CardinalityOp {
  readonly #root: CardComposite;

  constructor(spec: unknown) {
    if (!isMap(spec)) specFail(`cardinality expects a spec object, got ${describe(spec)}`, []);
    this.#root = new CardComposite("root", spec, []);
  }

  /** Applies the cardinality changes, copying containers only where they change. */
  apply(input: unknown, own: Ownership): unknown {
    const holder = own.own({ root: input } as JsonMap);
    const wp = new WalkedPath();
    wp.push(holder, new Matched("root"));
    this.#root.apply("root", input, wp, holder, { own });
    return holder.root;
  }
}
