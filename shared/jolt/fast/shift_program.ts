/**
 * Shift compiled to JavaScript for the raw JSON path: one function per composite spec node and
 * one per output path, with the spec's keys, hashes and array indexes written into the code.
 * V8 then sees constant property names and monomorphic calls where the reference walker
 * (engine/shift.ts) goes through generic helpers and polymorphic nodes.
 *
 * The generated code does exactly what the walker does, in the same order (every shift test
 * compares the raw path with the parsed one byte for byte). Per level it keeps the matched key
 * (K), its `*` captures (G), the key as an array index when known (I) and the input (R), which
 * is what WalkedPath holds for the walker. Specs using what it does not cover (`&` keys on the
 * left, `[#n]` outputs, stars with two or more `*` besides the lone one, `#` keys with children)
 * are not compiled: the fast path declines them and the body is parsed for the walker.
 *
 * Only constants the compiler produced itself go into the code, each through JSON.stringify: a
 * spec's text can never become code.
 *
 * The code charges the run's work budget (engine/limits.ts) exactly where the walker does
 * (engine/strategy.ts, ShiftWriter.write): the literal children probed per object or array, each
 * computed child tried per key, one per key of a `conflict` walk and per scalar, one per level
 * of each output path written.
 */

import {
  AmpElement,
  ArrayElement,
  AtElement,
  chargeSteps,
  type Children,
  type CompositeParts,
  DollarElement,
  type DotPath,
  HashElement,
  indexKey,
  javaToString,
  keyOf,
  type LeafParts,
  LiteralElement,
  parseJavaInt,
  type PathElement,
  putIndex,
  type Ref,
  type ShiftNode,
  type ShiftWriter,
  Source,
  StarElement,
  TransposeElement,
} from "../engine/mod.ts";
import { getOwn, type JsonMap, setKey } from "../json.ts";
import { keyHash, Kind, type RawDoc, SMALL_OBJECT } from "./raw_json.ts";

/** A compiled shift: writes the output of `doc` under `holder.root`. */
export type TapeProgram = (doc: RawDoc, holder: JsonMap) => void;

/** A looked-up tape position as a key (only scalars make keys), or null: keyOf on the tape. */
function tapeKey(doc: RawDoc, r: number): string | null {
  if (r < 0) return null;
  const kind = doc.kind(r);
  if (kind === Kind.Array || kind === Kind.Object) return null;
  return keyOf(doc.value(r));
}

/** Helpers the generated code calls. */
const RUNTIME = {
  getOwn,
  setKey,
  indexKey,
  javaToString,
  keyHash,
  tapeKey,
  /** An array index from a key, or -1 (what ArrayElement's `[&n]` accepts). */
  javaIndex(key: string): number {
    const n = parseJavaInt(key);
    return n !== null && n >= 0 ? n : -1;
  },
  putIndex,
  charge: chargeSteps,
};

/** True for a key expression that is a constant: a JSON string or an array index. */
function isConstant(key: string): boolean {
  return key.startsWith('"') || /^\d+$/.test(key);
}

/** True for a key expression computed at run time (a local `k<i>`), not a constant. */
function isDynamic(key: string): boolean {
  return key.startsWith("k");
}

/** Thrown while generating when the spec uses something the compiler does not cover. */
const UNSUPPORTED = Symbol("unsupported");

const js = (v: unknown) => JSON.stringify(v);

/**
 * Largest generated program, in characters; a larger spec runs on the walker. The code grows by
 * about 1.7 KB per literal key and 1.3 KB per wildcard key, and V8's optimizing compiler needs
 * memory far beyond the code's size for one large function: 2,000 literal keys under `*` (3.5 MB
 * of code) took 1.25 GB of RSS against 5,000 objects, 1,000 wildcard keys 1.4 GB, where the walker
 * stays under 80 MB and is as fast on such wide specs. Up to about 100 keys the code stays under
 * this (the fast path's gains are on narrow specs over large documents).
 */
export const FAST_PROGRAM_MAX_SOURCE = 192 * 1024;

/** Compiles the root node of a shift spec; null when the walker must run it (parsed). */
export function compileShift(root: ShiftNode): TapeProgram | null {
  const gen = new Generator();
  let body: string;
  try {
    body = gen.program(root);
  } catch (e) {
    if (e === UNSUPPORTED) return null;
    throw e;
  }
  if (body.length > FAST_PROGRAM_MAX_SOURCE) return null;
  const factory = new Function("rt", body) as (rt: typeof RUNTIME) => TapeProgram;
  return factory(RUNTIME);
}

/** Children of shift nodes are shift nodes (strategy.ts only knows them as `Child`). */
function asNode(child: unknown): ShiftNode {
  return child as ShiftNode;
}

function isLeaf(parts: CompositeParts | LeafParts): parts is LeafParts {
  return "writers" in parts;
}

/** A property name that is safe to read and write directly on a plain object. */
function plainName(key: string): boolean {
  return !(key in Object.prototype);
}

class Generator {
  #functions: string[] = [];
  #count = 0;
  /** Each node is generated once (a node sits at one depth, so its code is the same everywhere). */
  #done = new Map<ShiftNode, string>();
  /** Container functions by the path prefix they walk (see #container). */
  #containers = new Map<string, string>();
  /** Member finders by key (see #finder). */
  #finders = new Map<string, string>();
  /** The variables where container functions keep what they found. */
  #kept: string[] = [];

  program(root: ShiftNode): string {
    const parts = root.parts;
    if (isLeaf(parts)) throw UNSUPPORTED;
    // Level 0 is the holder, level 1 the root node (as ShiftOp pushes them).
    const name = this.#composite(root, 1, [1, 1]);
    return `"use strict";
const { getOwn, setKey, indexKey, javaToString, keyHash, tapeKey, javaIndex, putIndex, charge } = rt;
let doc = null, tape = null, bytes = null, holder = null, epoch = 0;
const K = [], G = [], I = [], R = [];
${this.#functions.join("\n")}
return function run(d, h) {
  doc = d; tape = d.tape; bytes = d.bytes; holder = h; epoch++;
  K[0] = "root"; G[0] = null; I[0] = -2; R[0] = 0; K[1] = "root"; G[1] = null; I[1] = -2;
  try { ${name}(0); } finally { doc = null; tape = null; bytes = null; holder = null; ${this.#release()} }
};`;
  }

  #name(prefix: string): string {
    return `${prefix}${this.#count++}`;
  }

  /**
   * The function for a composite node at `level` whose own key (K/G/I[level]) its caller set.
   * `groups[l]` is how many key parts level l offers (for checking references).
   */
  #composite(node: ShiftNode, level: number, groups: number[]): string {
    const done = this.#done.get(node);
    if (done !== undefined) return done;
    const parts = node.parts as CompositeParts;
    const name = this.#name("n");
    this.#done.set(node, name);
    const d = level;
    const lines: string[] = [`R[${d}] = r === -2 ? -1 : r;`];
    for (const special of parts.special) lines.push(this.#special(special, d, groups));
    lines.push("if (r < 0) return;");
    lines.push("const kind = tape[r * 4];");
    const c = parts.children;
    const st = parts.strategy;
    const withLiterals = st !== "computed";
    const withComputed = st !== "availableLiterals";
    // An object.
    lines.push(`if (kind === ${Kind.Object}) {`);
    const probes = st === "availableLiterals" || st === "availableLiteralsWithComputed"
      ? c.literalList.length
      : 0;
    if (probes > 0) lines.push(`charge(${probes});`);
    if (st === "availableLiterals" || st === "availableLiteralsWithComputed") {
      lines.push("let from = r + 1;");
      for (const l of c.literalList) {
        lines.push(`{ const v = ${this.#finder(l.key)}(r, from);`);
        lines.push(`if (v >= 0) { from = tape[v * 4 + 3];`);
        lines.push(this.#apply(asNode(l.child), js(l.key), "v", "-2", "null", d + 1, groups));
        lines.push("} }");
      }
    }
    if (withComputed) {
      lines.push("for (let k = r + 1, n = tape[r * 4 + 2]; n > 0; n--) {");
      lines.push("const v = k + 1; const key = doc.key(k);");
      if (st === "conflict") lines.push("charge(1);");
      lines.push(this.#conflictOrComputed(c, st === "conflict", "key", "v", "-2", d, groups));
      lines.push("k = tape[v * 4 + 3]; }");
    }
    // An array.
    lines.push(`} else if (kind === ${Kind.Array}) {`);
    lines.push("const size = tape[r * 4 + 2];");
    if (probes > 0) lines.push(`charge(${probes});`);
    if (st === "availableLiterals" || st === "availableLiteralsWithComputed") {
      for (const l of c.literalList) {
        if (l.index < 0) continue;
        lines.push(`if (${l.index} < size) {`);
        lines.push(
          this.#apply(
            asNode(l.child),
            js(l.key),
            `doc.element(r, ${l.index})`,
            // I holds a level's key as an index only when it is that index's canonical spelling
            // ("00" matches element 0 but stays a text key): writers rely on it (see #key).
            l.key === String(l.index) ? String(l.index) : "-2",
            "null",
            d + 1,
            groups,
          ),
        );
        lines.push("}");
      }
    }
    if (withComputed) {
      lines.push("for (let i = 0, e = r + 1; i < size; i++) {");
      lines.push("const key = indexKey(i);");
      if (st === "conflict") lines.push("charge(1);");
      lines.push(this.#conflictOrComputed(c, st === "conflict", "key", "e", "i", d, groups));
      lines.push("e = tape[e * 4 + 3]; }");
    }
    // A scalar: matched as if it were a key with nothing under it.
    lines.push(`} else if (kind !== ${Kind.Null}) {`);
    lines.push("const scalar = javaToString(doc.value(r)); charge(1);");
    if (st === "conflict") {
      lines.push(this.#conflictOrComputed(c, true, "scalar", "-2", "-2", d, groups));
    } else {
      if (withLiterals && c.literalList.length > 0) {
        lines.push("switch (scalar) {");
        for (const l of c.literalList) {
          lines.push(`case ${js(l.key)}: {`);
          lines.push(this.#apply(asNode(l.child), js(l.key), "-2", "-2", "null", d + 1, groups));
          lines.push("break; }");
        }
        lines.push("}");
      }
      if (withComputed) lines.push(this.#computed(c, "scalar", "-2", "-2", d, groups));
    }
    lines.push("}");
    this.#functions.push(`function ${name}(r) {\n${lines.join("\n")}\n}`);
    return name;
  }

  /** Per key: its literal child if there is one (conflict), else the first computed match. */
  #conflictOrComputed(
    c: Children<unknown>,
    conflict: boolean,
    key: string,
    r: string,
    index: string,
    d: number,
    groups: number[],
  ): string {
    if (!conflict || c.literalList.length === 0) return this.#computed(c, key, r, index, d, groups);
    const out = [`switch (${key}) {`];
    for (const l of c.literalList) {
      out.push(`case ${js(l.key)}: {`);
      out.push(this.#apply(asNode(l.child), js(l.key), r, index, "null", d + 1, groups));
      out.push("break; }");
    }
    out.push(`default: {`, this.#computed(c, key, r, index, d, groups), "} }");
    return out.join("\n");
  }

  /** The computed children in precedence order; the first that matches takes the key. */
  #computed(
    c: Children<unknown>,
    key: string,
    r: string,
    index: string,
    d: number,
    groups: number[],
  ): string {
    const out: string[] = [];
    let first = true;
    let tried = 0;
    for (const child of c.computed.map(asNode)) {
      const pe = child.parts.pe;
      if (!(pe instanceof StarElement)) throw UNSUPPORTED;
      const star = pe.star;
      let test: string;
      let groupsExpr: string;
      let count: number;
      if (star.kind === "starAll") {
        test = "true";
        groupsExpr = "null";
        count = 1;
      } else if (star.kind === "starSingle") {
        const at = star.canonical.indexOf("*");
        const prefix = star.canonical.slice(0, at);
        const suffix = star.canonical.slice(at + 1);
        test = `${key}.length > ${prefix.length + suffix.length} && ${key}.startsWith(${
          js(prefix)
        }) && ${key}.endsWith(${js(suffix)})`;
        groupsExpr = `[${key}.slice(${prefix.length}, ${key}.length - ${suffix.length})]`;
        count = 2;
      } else {
        throw UNSUPPORTED;
      }
      // The walker charges a step per child tried, up to the one that takes the key.
      out.push(`${first ? "" : "else "}if (${test}) { charge(${++tried});`);
      out.push(this.#apply(child, key, r, index, groupsExpr, d + 1, groups, count));
      out.push("}");
      first = false;
      if (test === "true") return out.join("\n"); // nothing after a lone `*` can match
    }
    if (tried > 0) out.push(`else charge(${tried});`);
    return out.join("\n");
  }

  /** Applies a matched child at `level`: sets its key parts, then runs it. */
  #apply(
    child: ShiftNode,
    key: string,
    r: string,
    index: string,
    groupsExpr: string,
    level: number,
    groups: number[],
    count = 1,
  ): string {
    const parts = child.parts;
    const set = `K[${level}] = ${key}; G[${level}] = ${groupsExpr}; I[${level}] = ${index};`;
    const next = [...groups.slice(0, level), count];
    if (!isLeaf(parts)) {
      if (!(parts.pe instanceof LiteralElement || parts.pe instanceof StarElement)) {
        throw UNSUPPORTED;
      }
      return `${set} ${this.#composite(child, level, next)}(${r});`;
    }
    if (parts.source !== Source.Input) throw UNSUPPORTED;
    return `${set} R[${level}] = ${r} < 0 ? -1 : ${r}; ${this.#leaf(child, r, level, next)}`;
  }

  /** A `@`, `$` or `#` child of the composite at level `d` (whose input is `r`). */
  #special(node: ShiftNode, d: number, groups: number[]): string {
    const parts = node.parts;
    const level = d + 1;
    const pe = parts.pe;
    // `@` and `@(…)` match as their parent: same key parts.
    const asParent = `K[${level}] = K[${d}]; G[${level}] = G[${d}]; I[${level}] = I[${d}];`;
    const parentGroups = [...groups.slice(0, level), groups[d]];
    if (pe instanceof TransposeElement) {
      const found = this.#lookup(pe, d, groups);
      if (!isLeaf(parts)) {
        // The children walk the data found instead of the input.
        const fn = this.#composite(node, level, parentGroups);
        return `{ const found = ${found}; if (found !== -2) { ${asParent} ${fn}(found); } }`;
      }
      if (parts.writers.length === 0) return "";
      const calls = this.#writerCalls(node, level, parentGroups);
      return `{ const found = ${found}; if (found !== -2) { ${asParent} R[${level}] = r < 0 ? -1 : r;
const data = found < 0 ? null : doc.leaf(found); ${calls} } }`;
    }
    if (!isLeaf(parts)) throw UNSUPPORTED;
    if (pe instanceof AtElement) {
      return `{ ${asParent} R[${level}] = r < 0 ? -1 : r; ${
        this.#leaf(node, "r", level, parentGroups)
      } }`;
    }
    let keyExpr: string;
    if (pe instanceof DollarElement) {
      keyExpr = this.#ref(pe.ref, d, groups);
    } else if (pe instanceof HashElement) {
      keyExpr = js(pe.value);
    } else {
      throw UNSUPPORTED;
    }
    const set =
      `K[${level}] = ${keyExpr}; G[${level}] = null; I[${level}] = -2; R[${level}] = r < 0 ? -1 : r;`;
    return `{ ${set} ${this.#leaf(node, "r", level, [...groups.slice(0, level), 1])} }`;
  }

  /** A leaf at `level`: its data, then each output path. */
  #leaf(node: ShiftNode, r: string, level: number, groups: number[]): string {
    const parts = node.parts as LeafParts;
    const data = parts.source === Source.Key ? `K[${level}]` : `(${r} < 0 ? null : doc.leaf(${r}))`;
    if (parts.source === Source.Transpose) throw UNSUPPORTED;
    if (parts.writers.length === 0) return "";
    return `{ const data = ${data}; ${this.#writerCalls(node, level, groups)} }`;
  }

  /** Calls of a leaf's writer functions with `data`. */
  #writerCalls(node: ShiftNode, level: number, groups: number[]): string {
    let calls = this.#done.get(node);
    if (calls === undefined) {
      const writers = (node.parts as LeafParts).writers;
      calls = writers.map((w) => `${this.#writer(w, level, groups)}(data);`).join(" ");
      this.#done.set(node, calls);
    }
    return calls;
  }

  /**
   * The tape position a transpose finds, seen from `level` (what TransposeElement.lookup finds
   * on parsed values): a position, -1 for a null without a record, or -2 for nothing.
   */
  #lookup(pe: TransposeElement, level: number, groups: number[]): string {
    const at = level - pe.up;
    if (at < 0) throw UNSUPPORTED;
    if (pe.reader === null) return `R[${at}]`;
    const path = pe.reader as DotPath;
    const keys = path.elements.map((el) => this.#pureKey(el, level, groups));
    const dynamic = keys.filter((k) => !isConstant(k));
    return `${this.#reader(path.steps, keys)}(R[${at}]${dynamic.map((k) => `, ${k}`).join("")})`;
  }

  /**
   * A function reading a path from a tape position, as DotPath.read does on parsed values (-1 for
   * an index past the end of an array midway, -2 for nothing), with the path's constant keys and
   * their hashes written in. Its arguments: the start position, then the dynamic keys.
   */
  #reader(steps: ArrayLike<number>, keys: string[]): string {
    const name = this.#name("L");
    const params: string[] = [];
    const lines: string[] = [];
    const keyOf = keys.map((k) => {
      if (isConstant(k)) return k;
      const p = `p${params.length}`;
      params.push(p);
      return p;
    });
    // An index that did not resolve (negative) reads nothing, whatever comes before it.
    keyOf.forEach((k, i) => {
      if (steps[i] !== 0 && !isConstant(k)) lines.push(`if (${k} < 0) return -2;`);
    });
    const last = steps.length - 1;
    for (let i = 0; i <= last; i++) {
      lines.push("if (cur < 0) return -2;");
      if (steps[i] === 0) {
        const key = keyOf[i];
        const find = isConstant(key)
          ? `${this.#finder(JSON.parse(key))}(cur, cur + 1)`
          : `doc.member(cur, ${key}, keyHash(${key}))`;
        lines.push(`if (tape[cur * 4] !== ${Kind.Object}) return -2;`);
        lines.push(`const m${i} = ${find};`);
        lines.push(
          i === last ? `return m${i} >= 0 ? m${i} : -2;` : `cur = m${i} >= 0 ? m${i} : -1;`,
        );
      } else {
        const index = keyOf[i];
        lines.push(`if (tape[cur * 4] !== ${Kind.Array}) return -2;`);
        lines.push(`if (${index} >= tape[cur * 4 + 2]) return ${i === last ? -2 : -1};`);
        lines.push(`cur = doc.element(cur, ${index});`);
      }
    }
    if (steps[last] !== 0) lines.push("return cur;");
    this.#functions.push(`function ${name}(cur${params.map((p) => `, ${p}`).join("")}) {
${lines.join("\n")}
}`);
    return name;
  }

  /**
   * A function finding the member `key` of the object at tape position `r` as
   * RawDoc.memberFrom does (from key record `from` on, then from the start; the value's
   * position or -1), with the key's hash and its bytes written into the comparison: a short
   * key is checked byte by byte without a loop or a call.
   */
  #finder(key: string): string {
    const known = this.#finders.get(key);
    if (known !== undefined) return known;
    const name = this.#name("f");
    this.#finders.set(key, name);
    const utf8 = new TextEncoder().encode(key);
    const ascii = utf8.every((c) => c >= 0x20 && c < 0x80 && c !== 0x22 && c !== 0x5c);
    // A key record without escapes holds the key's bytes; an escaped one its decoded text.
    let same: string;
    if (!ascii) {
      same = `tape[k * 4] === ${Kind.String} ? false : doc.keys[k] === ${js(key)}`;
    } else if (utf8.length <= 16) {
      const bytes = Array.from(utf8, (c, i) => `bytes[s + ${i}] === ${c}`);
      same =
        `tape[k * 4] === ${Kind.String} ? (s = tape[k * 4 + 1], tape[k * 4 + 2] - s === ${utf8.length}${
          bytes.map((b) => ` && ${b}`).join("")
        }) : doc.keys[k] === ${js(key)}`;
    } else {
      same = `doc.keyIs(k, ${js(key)})`;
    }
    const hash = keyHash(key);
    // A large object goes through the document's index of its keys (RawDoc.indexedMember).
    this.#functions.push(`function ${name}(r, from) {
const end = tape[r * 4 + 3]; let s = 0;
if (tape[r * 4 + 2] > ${SMALL_OBJECT}) { let k = from; if (k < end && tape[k * 4 + 3] === ${hash} && (${same})) return k + 1; return doc.indexedMember(r, ${
      js(key)
    }); }
for (let k = from; k < end; k = tape[(k + 1) * 4 + 3]) if (tape[k * 4 + 3] === ${hash} && (${same})) return k + 1;
for (let k = r + 1; k < from; k = tape[(k + 1) * 4 + 3]) if (tape[k * 4 + 3] === ${hash} && (${same})) return k + 1;
return -1;
}`);
    return name;
  }

  /** A key of a lookup path, as one expression (a negative index: did not resolve). */
  #pureKey(el: PathElement, level: number, groups: number[]): string {
    if (el instanceof LiteralElement) return js(el.key);
    if (el instanceof ArrayElement) {
      if (el.type === "explicit") return String(el.index);
      if (el.type !== "ref") throw UNSUPPORTED;
      return this.#indexRef(el.ref!, level, groups);
    }
    if (el instanceof AmpElement) return this.#amp(el, level, groups);
    throw UNSUPPORTED;
  }

  /** The array index a `[&…]` reference stands for, or -1. */
  #indexRef(ref: Ref, level: number, groups: number[]): string {
    const at = level - ref.up;
    if (at < 0 || ref.group >= (groups[at] ?? 0)) throw UNSUPPORTED;
    return ref.group === 0
      ? `(I[${at}] !== -2 ? I[${at}] : javaIndex(K[${at}]))`
      : `javaIndex(G[${at}][${ref.group - 1}])`;
  }

  /** The text of an `&` key. */
  #amp(el: AmpElement, level: number, groups: number[]): string {
    const parts = el.tokens.map((t) => typeof t === "string" ? js(t) : this.#ref(t, level, groups));
    return parts.length === 1 ? parts[0] : `("" + ${parts.join(" + ")})`;
  }

  /** The key part `ref` points at, seen from `level` (validated: it always exists). */
  #ref(ref: Ref, level: number, groups: number[]): string {
    const at = level - ref.up;
    if (at < 0 || ref.group >= (groups[at] ?? 0)) throw UNSUPPORTED;
    return ref.group === 0 ? `K[${at}]` : `G[${at}][${ref.group - 1}]`;
  }

  /** The function writing one output path from a leaf at `level` (ShiftWriter.write). */
  #writer(writer: ShiftWriter, level: number, groups: number[]): string {
    const name = this.#name("w");
    const els = writer.path.elements;
    const steps = writer.path.steps;
    const lines: string[] = [`charge(${els.length});`]; // as ShiftWriter.write
    // Keys first: if one does not resolve, nothing is written.
    const numeric = new Set<number>();
    const keys = els.map((el, i) => this.#key(el, i, level, groups, lines, numeric));
    const last = els.length - 1;
    const dynamic = keys.slice(0, last).filter((k) => isDynamic(k));
    if (last === 0) {
      lines.push("const tree = holder;");
    } else {
      const container = this.#container(steps, keys, last, steps[last] === 0);
      lines.push(
        `const tree = ${container}(${dynamic.join(", ")}); if (tree === undefined) return;`,
      );
    }
    const step = steps[last];
    const byIndex = step === 0 && numeric.has(last) ? `n${last}` : null;
    const put = (v: string) =>
      byIndex === null
        ? this.#put(step, keys[last], v)
        : `{ if (${byIndex} >= 0) tree[${byIndex}] = ${v}; else ${
          this.#put(step, keys[last], v)
        } }`;
    if (step === 2) {
      lines.push(put("data"));
    } else {
      const get = this.#get(step, keys[last]);
      lines.push(
        `let existing = ${byIndex === null ? get : `${byIndex} >= 0 ? tree[${byIndex}] : ${get}`};`,
      );
      lines.push(
        `if (typeof existing === "number" && tape[existing * 4] >= ${Kind.Array}) { existing = doc.refValue(existing); ${
          put("existing")
        } }`,
      );
      lines.push(`if (existing === null || existing === undefined) ${put("data")}`);
      lines.push("else if (Array.isArray(existing)) existing.push(data);");
      // A container that becomes an array element is no longer where #container found it.
      lines.push(`else { epoch++; ${put("[existing, data]")} }`);
    }
    this.#functions.push(`function ${name}(data) {\n${lines.join("\n")}\n}`);
    return name;
  }

  /**
   * The function returning the container that element `m` of an output path is written into
   * (elements 0 to m - 1 walked from the holder, creating what is missing), or undefined when
   * something in the way is not a container of the kind needed (nothing is written then). Its
   * arguments are the dynamic keys among elements 0 to m - 1.
   *
   * Writers that share a path prefix share its function, which keeps the container it found for
   * the rest of the run (for the same dynamic keys): most writes of a document go into a few
   * containers, and walking down to them again is most of a write's cost. A kept container stays
   * valid because containers are only ever displaced by becoming the first element of a
   * conflict array, which starts a new epoch; and a path through an append (`[]`) makes a new
   * element every time, so it keeps nothing.
   */
  #container(steps: ArrayLike<number>, keys: string[], m: number, wantMap: boolean): string {
    const signature = JSON.stringify([
      Array.from(steps).slice(0, m),
      keys.slice(0, m).map((k) => isDynamic(k) ? null : k),
      wantMap,
    ]);
    const known = this.#containers.get(signature);
    if (known !== undefined) return known;
    const name = this.#name("c");
    this.#containers.set(signature, name);
    // Parameters: the dynamic keys of the prefix, in order; the parent takes the first of them.
    const params: string[] = [];
    const keyOf: string[] = [];
    for (let i = 0; i < m; i++) {
      if (isDynamic(keys[i])) {
        keyOf.push(`p${params.length}`);
        params.push(`p${params.length}`);
      } else {
        keyOf.push(keys[i]);
      }
    }
    const last = m - 1;
    const parentParams = params.slice(
      0,
      keyOf.slice(0, last).filter((k) => k.startsWith("p")).length,
    );
    const parent = last === 0
      ? "holder"
      : `${this.#container(steps, keys, last, steps[last] === 0)}(${parentParams.join(", ")})`;
    const cacheable = !Array.from(steps).slice(0, m).includes(2);
    const lines: string[] = [];
    if (cacheable) {
      this.#functions.push(
        `let E${name} = -1, C${name}${params.map((p) => `, ${p}${name}`).join("")};`,
      );
      this.#kept.push(`C${name}`);
      const same = params.map((p) => ` && ${p}${name} === ${p}`).join("");
      lines.push(`if (E${name} === epoch${same}) return C${name};`);
    }
    lines.push(`const tree = ${parent}; if (tree === undefined) return undefined;`);
    const put = this.#put(steps[last], keyOf[last], "sub");
    lines.push(`let sub = ${this.#get(steps[last], keyOf[last])};`);
    // A tape position: a container becomes ours to write into; a scalar stays and clashes.
    lines.push(
      `if (typeof sub === "number" && tape[sub * 4] >= ${Kind.Array}) { sub = doc.refValue(sub); ${put} }`,
    );
    lines.push(`if (sub === null || sub === undefined) { sub = ${wantMap ? "{}" : "[]"}; ${put} }`);
    lines.push(
      `else if (typeof sub !== "object" || Array.isArray(sub) === ${wantMap}) return undefined;`,
    );
    if (cacheable) {
      lines.push(
        `C${name} = sub; E${name} = epoch;${params.map((p) => ` ${p}${name} = ${p};`).join("")}`,
      );
    }
    lines.push("return sub;");
    this.#functions.push(`function ${name}(${params.join(", ")}) {\n${lines.join("\n")}\n}`);
    return name;
  }

  /** Drops the containers kept by #container, so that an output is not kept past its run. */
  #release(): string {
    return [...this.#kept].map((c) => `${c} = undefined;`).join(" ");
  }

  /** The expression of path element `i`'s key; dynamic ones go into locals checked up front. */
  #key(
    el: PathElement,
    i: number,
    level: number,
    groups: number[],
    lines: string[],
    numeric?: Set<number>,
  ): string {
    if (el instanceof LiteralElement) return js(el.key);
    if (el instanceof ArrayElement) {
      if (el.type === "explicit") return String(el.index);
      if (el.type === "append") return "";
      const index = el.type === "ref"
        ? this.#indexRef(el.ref!, level, groups)
        : el.type === "transpose"
        ? `javaIndex(tapeKey(doc, ${this.#lookup(el.transpose!, level, groups)}) ?? "")`
        : null;
      if (index === null) throw UNSUPPORTED;
      lines.push(`const k${i} = ${index}; if (k${i} < 0) return;`);
      return `k${i}`;
    }
    if (el instanceof AmpElement) {
      lines.push(`const k${i} = ${this.#amp(el, level, groups)};`);
      const [token] = el.tokens;
      if (el.tokens.length === 1 && typeof token !== "string" && token.group === 0 && numeric) {
        // The key of a level that is an array element is its index: written as an element of the
        // object (monomorphic element access) rather than through a property name.
        lines.push(`const n${i} = I[${level - token.up}];`);
        numeric.add(i);
      }
      return `k${i}`;
    }
    if (el instanceof TransposeElement) {
      lines.push(
        `const k${i} = tapeKey(doc, ${
          this.#lookup(el, level, groups)
        }); if (k${i} === null) return;`,
      );
      return `k${i}`;
    }
    throw UNSUPPORTED;
  }

  #get(step: number, key: string): string {
    if (step === 2) return "undefined"; // an append always makes a new element
    if (step === 1) return `tree[${key}]`;
    if (key.startsWith('"') && plainName(JSON.parse(key))) return `tree[${key}]`;
    return `getOwn(tree, ${key})`;
  }

  #put(step: number, key: string, value: string): string {
    if (step === 2) return `tree.push(${value});`;
    if (step === 1) return `putIndex(tree, ${key}, ${value});`;
    if (key.startsWith('"') && plainName(JSON.parse(key))) return `tree[${key}] = ${value};`;
    return `setKey(tree, ${key}, ${value});`;
  }
}
