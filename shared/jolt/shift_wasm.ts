/**
 * A lone shift run inside WebAssembly (wasm/shift.c) on the tape the WebAssembly scanner just
 * wrote: the output tree and the JSON written from it stay in the module's memory, so a
 * transformed body costs no JavaScript objects at all. This module compiles a spec into the
 * program shift.c walks, and runs it.
 *
 * The program mirrors what shift_codegen.ts generates, node for node, and covers less: a spec
 * with something else (see the UNSUPPORTED throws) gets no program, and a document the module
 * cannot finish (see shift.c) is handed back to JavaScript mid-way, which starts over on the
 * same tape. Either way the output is the same bytes.
 */

import {
  AmpElement,
  ArrayElement,
  AtElement,
  DollarElement,
  HashElement,
  LiteralElement,
  type PathElement,
} from "./path_elements.ts";
import { StarElement, TransposeElement } from "./path_elements.ts";
import type { DotPath } from "./paths.ts";
import type { Ref } from "./references.ts";
import type { CompositeParts, LeafParts, ShiftNode } from "./shift_parts.ts";
import { Source } from "./shift_parts.ts";
import type { ShiftWriter } from "./shift_write.ts";
import type { Children } from "./strategy.ts";
import { keyHash } from "./raw_json.ts";

/** Record types and codes: the enums of shift.c. */
const T = {
  Composite: 1,
  Leaf: 2,
  TransposeLeaf: 3,
  TransposeComposite: 4,
  AtLeaf: 5,
  KeyedLeaf: 6,
};
const STRATEGY: Record<string, number> = {
  availableLiterals: 0,
  availableLiteralsWithComputed: 1,
  computed: 2,
  conflict: 3,
};
const SRC_INPUT = 0;
const SRC_KEY = 1;
const E = {
  Key: 0,
  Index: 1,
  Append: 2,
  IndexRef: 3,
  Amp: 4,
  KeyLookup: 5,
  IndexLookup: 6,
  IndexCount: 7,
};
const KEY_REF = 0;
const KEY_CONST = 1;
/** Levels shift.c keeps (MAX_LEVELS): deeper specs are left to JavaScript. */
const MAX_LEVELS = 60;
/** Steps a lookup path may have (MAX_LOOKUP_STEPS). */
const MAX_LOOKUP_STEPS = 16;
/** Writers whose containers shift.c keeps (CACHE_SLOTS). */
const CACHE_SLOTS = 1024;
/** `[&n]` indexes a kept container's path may have (CACHE_INDEXES). */
const CACHE_INDEXES = 4;

/** A spec compiled for shift.c: int records, then the UTF-8 strings they point into. */
export interface WasmShiftProgram {
  readonly ints: Int32Array;
  readonly strings: Uint8Array;
}

/** Ints per output path element (ELEM). */
const ELEM = 6;

const UNSUPPORTED = Symbol("unsupported");

/**
 * A key as shift.c's array_index sees it: the array index it is as a JavaScript object's key,
 * -2 for one past an i32 (shift.c declines those), else -1.
 */
function arrayIndex(key: string): number {
  if (!/^(0|[1-9][0-9]{0,9})$/.test(key)) return -1;
  const n = Number(key);
  if (n > 0xfffffffe) return -1;
  return n <= 0x7fffffff ? n : -2;
}
const ENCODER = new TextEncoder();

function isLeaf(parts: CompositeParts | LeafParts): parts is LeafParts {
  return "writers" in parts;
}

/** The program for a shift's root node, or null when shift.c does not cover the spec. */
export function compileWasmShift(root: ShiftNode): WasmShiftProgram | null {
  try {
    return new Compiler().program(root);
  } catch (e) {
    if (e === UNSUPPORTED) return null;
    throw e;
  }
}

class Compiler {
  #ints: number[] = [0]; // [0]: the root composite
  #bytes: number[] = [];
  #strings = new Map<string, [number, number]>();
  #done = new Map<ShiftNode, number>();
  #slots = new Map<string, number>();

  program(root: ShiftNode): WasmShiftProgram {
    if (isLeaf(root.parts)) throw UNSUPPORTED;
    this.#ints[0] = this.#composite(root, 1, [1, 1]);
    return { ints: Int32Array.from(this.#ints), strings: Uint8Array.from(this.#bytes) };
  }

  /**
   * A string's place in the string table. Only text that JSON.stringify writes as it is (no
   * quote, backslash, control character or lone surrogate) can be written by shift.c as bytes.
   */
  #string(s: string): [number, number] {
    const known = this.#strings.get(s);
    if (known) return known;
    if (!s.isWellFormed()) throw UNSUPPORTED;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c < 0x20 || c === 0x22 || c === 0x5c) throw UNSUPPORTED;
    }
    const utf8 = ENCODER.encode(s);
    const at: [number, number] = [this.#bytes.length, utf8.length];
    for (const b of utf8) this.#bytes.push(b);
    this.#strings.set(s, at);
    return at;
  }

  /** Reserves n ints; returns where they start. */
  #reserve(n: number): number {
    const at = this.#ints.length;
    for (let i = 0; i < n; i++) this.#ints.push(0);
    return at;
  }

  #composite(node: ShiftNode, level: number, groups: number[]): number {
    const done = this.#done.get(node);
    if (done !== undefined) return done;
    if (level >= MAX_LEVELS) throw UNSUPPORTED;
    const parts = node.parts as CompositeParts;
    const strategy = STRATEGY[parts.strategy];
    if (strategy === undefined) throw UNSUPPORTED;
    const c = parts.children as Children<unknown>;
    const computed = c.computed as unknown as ShiftNode[];
    const at = this.#reserve(
      5 + parts.special.length + 6 * c.literalList.length + 6 * computed.length,
    );
    this.#done.set(node, at);
    const p = this.#ints;
    p[at] = T.Composite;
    p[at + 1] = strategy;
    p[at + 2] = parts.special.length;
    p[at + 3] = c.literalList.length;
    p[at + 4] = computed.length;
    let o = at + 5;
    for (const s of parts.special) p[o++] = this.#special(s, level, groups);
    const d = level;
    for (const l of c.literalList) {
      const [s, n] = this.#string(l.key);
      const child = l.child as unknown as ShiftNode;
      p[o] = s;
      p[o + 1] = n;
      p[o + 2] = l.hash;
      p[o + 3] = l.index;
      p[o + 4] = l.index >= 0 && l.key === String(l.index) ? l.index : -2;
      p[o + 5] = this.#child(child, d + 1, groups, 1);
      o += 6;
    }
    for (const child of computed) {
      const pe = child.parts.pe;
      if (!(pe instanceof StarElement)) throw UNSUPPORTED;
      const star = pe.star;
      if (star.kind === "starAll") {
        p[o] = 0;
        p[o + 5] = this.#child(child, d + 1, groups, 1);
      } else if (star.kind === "starSingle") {
        const i = star.canonical.indexOf("*");
        const [ps, pn] = this.#string(star.canonical.slice(0, i));
        const [ss, sn] = this.#string(star.canonical.slice(i + 1));
        p[o] = 1;
        p[o + 1] = ps;
        p[o + 2] = pn;
        p[o + 3] = ss;
        p[o + 4] = sn;
        p[o + 5] = this.#child(child, d + 1, groups, 2);
      } else {
        throw UNSUPPORTED;
      }
      o += 6;
    }
    return at;
  }

  /** A matched child at `level` (#apply in shift_codegen.ts). */
  #child(child: ShiftNode, level: number, groups: number[], count: number): number {
    const next = [...groups.slice(0, level), count];
    const parts = child.parts;
    if (!isLeaf(parts)) {
      if (!(parts.pe instanceof LiteralElement || parts.pe instanceof StarElement)) {
        throw UNSUPPORTED;
      }
      return this.#composite(child, level, next);
    }
    if (parts.source !== Source.Input) throw UNSUPPORTED;
    const done = this.#done.get(child);
    if (done !== undefined) return done;
    const at = this.#leafRecord([T.Leaf, SRC_INPUT], parts.writers, level, next);
    this.#done.set(child, at);
    return at;
  }

  /** A record: `head`, the writer count, then the writers' offsets. */
  #leafRecord(head: number[], writers: readonly ShiftWriter[], level: number, groups: number[]) {
    const at = this.#reserve(head.length + 1 + writers.length);
    head.forEach((v, i) => this.#ints[at + i] = v);
    this.#ints[at + head.length] = writers.length;
    writers.forEach((w, i) => {
      this.#ints[at + head.length + 1 + i] = this.#writer(w, level, groups);
    });
    return at;
  }

  /** A `@`, `$` or `#` child of the composite at level `d` (#special). */
  #special(node: ShiftNode, d: number, groups: number[]): number {
    const parts = node.parts;
    const level = d + 1;
    const pe = parts.pe;
    const parentGroups = [...groups.slice(0, level), groups[d]];
    if (pe instanceof TransposeElement) {
      const lookup = this.#lookup(pe, d, groups);
      if (!isLeaf(parts)) {
        const at = this.#reserve(3);
        const fn = this.#composite(node, level, parentGroups);
        this.#ints[at] = T.TransposeComposite;
        this.#ints[at + 1] = lookup;
        this.#ints[at + 2] = fn;
        return at;
      }
      return this.#leafRecord([T.TransposeLeaf, lookup], parts.writers, level, parentGroups);
    }
    if (!isLeaf(parts)) throw UNSUPPORTED;
    if (parts.source === Source.Transpose) throw UNSUPPORTED;
    const source = parts.source === Source.Key ? SRC_KEY : SRC_INPUT;
    if (pe instanceof AtElement) {
      return this.#leafRecord([T.AtLeaf, source], parts.writers, level, parentGroups);
    }
    const keyed = [...groups.slice(0, level), 1];
    if (pe instanceof DollarElement) {
      const ref = this.#ref(pe.ref, d, groups);
      return this.#leafRecord(
        [T.KeyedLeaf, KEY_REF, ref.up, ref.group, source],
        parts.writers,
        level,
        keyed,
      );
    }
    if (pe instanceof HashElement) {
      const [s, n] = this.#string(pe.value);
      return this.#leafRecord([T.KeyedLeaf, KEY_CONST, s, n, source], parts.writers, level, keyed);
    }
    throw UNSUPPORTED;
  }

  /**
   * A transpose's lookup, seen from `level`: [up, steps (-1: none), then per step four ints: 0, a
   * constant key's string and hash; 1, a constant index; or 2, an output path element record
   * (step, kind, four ints) for a key or index computed from the walked path].
   */
  #lookup(pe: TransposeElement, level: number, groups: number[]): number {
    if (level - pe.up < 0) throw UNSUPPORTED;
    if (pe.reader === null) {
      const at = this.#reserve(2);
      this.#ints[at] = pe.up;
      this.#ints[at + 1] = -1;
      return at;
    }
    const path = pe.reader as DotPath;
    const els = path.elements;
    if (els.length > MAX_LOOKUP_STEPS) throw UNSUPPORTED;
    const at = this.#reserve(2 + 4 * els.length);
    this.#ints[at] = pe.up;
    this.#ints[at + 1] = els.length;
    els.forEach((el, i) => {
      const o = at + 2 + i * 4;
      const step = path.steps[i];
      let record: number[];
      if (el instanceof LiteralElement && step === 0) {
        const [s, n] = this.#string(el.key);
        record = [0, s, n, keyHash(el.key)];
      } else if (el instanceof ArrayElement && el.type === "explicit" && step === 1) {
        record = [1, el.index, 0, 0];
      } else if (el instanceof ArrayElement && el.type === "ref" && step === 1) {
        const ref = this.#ref(el.ref!, level, groups);
        const e = this.#reserve(ELEM);
        [1, E.IndexRef, ref.up, ref.group].forEach((v, k) => this.#ints[e + k] = v);
        record = [2, e, 0, 0];
      } else if (el instanceof AmpElement && step === 0) {
        const [tokens, count] = this.#ampTokens(el, level, groups);
        const e = this.#reserve(ELEM);
        [0, E.Amp, tokens, count].forEach((v, k) => this.#ints[e + k] = v);
        record = [2, e, 0, 0];
      } else {
        throw UNSUPPORTED;
      }
      record.forEach((v, k) => this.#ints[o + k] = v);
    });
    return at;
  }

  /** The tokens of an `&` key ([kind, a, b] each): where they start, and how many. */
  #ampTokens(el: AmpElement, level: number, groups: number[]): [number, number] {
    const tokens = el.tokens.map((t) => {
      if (typeof t === "string") return [KEY_CONST, ...this.#string(t)];
      const ref = this.#ref(t, level, groups);
      return [KEY_REF, ref.up, ref.group];
    });
    const at = this.#reserve(3 * tokens.length);
    tokens.forEach((tok, j) => tok.forEach((v, k) => this.#ints[at + j * 3 + k] = v));
    return [at, tokens.length];
  }

  /** A reference seen from `level`, checked as shift_codegen.ts checks it. */
  #ref(ref: Ref, level: number, groups: number[]): Ref {
    const at = level - ref.up;
    if (at < 0 || ref.group >= (groups[at] ?? 0) || ref.group > 1) throw UNSUPPORTED;
    return ref;
  }

  /**
   * The container cache slot (see shift.c) of an output path whose elements before the last are
   * `prefix`: shared by the paths with the same prefix, as shift_codegen.ts shares its container
   * functions. -1 (no cache) when the prefix appends, or has keys other than constants and up to
   * CACHE_INDEXES `[&n]` indexes.
   */
  #cacheSlot(prefix: readonly PathElement[]): number {
    let indexes = 0;
    const signature: unknown[] = [];
    for (const el of prefix) {
      if (el instanceof LiteralElement) signature.push(el.key);
      else if (el instanceof ArrayElement && el.type === "explicit") signature.push([el.index]);
      else if (el instanceof ArrayElement && el.type === "ref") {
        if (++indexes > CACHE_INDEXES) return -1;
        signature.push(null);
      } else return -1;
    }
    const key = JSON.stringify(signature);
    let slot = this.#slots.get(key);
    if (slot === undefined) {
      if (this.#slots.size >= CACHE_SLOTS) return -1;
      slot = this.#slots.size;
      this.#slots.set(key, slot);
    }
    return slot;
  }

  /**
   * An output path: [elements, then per element: step, kind and four ints (a key's string, its
   * hash and array index; an index; a reference; `&` tokens), then a cache slot, the number of
   * `[&n]` elements before the last and their positions].
   */
  #writer(writer: ShiftWriter, level: number, groups: number[]): number {
    const els = writer.path.elements;
    const steps = writer.path.steps;
    if (els.length >= MAX_LEVELS) throw UNSUPPORTED;
    const at = this.#reserve(1 + ELEM * els.length + 2 + CACHE_INDEXES);
    this.#ints[at] = els.length;
    // The cache slot, then where the prefix's `[&n]` indexes are (what finds a kept container).
    const tail = at + 1 + ELEM * els.length;
    const slot = this.#cacheSlot(els.slice(0, -1));
    this.#ints[tail] = slot;
    if (slot >= 0) {
      const positions = els.slice(0, -1).flatMap((el, i) =>
        el instanceof ArrayElement && el.type === "ref" ? [i] : []
      );
      this.#ints[tail + 1] = positions.length;
      positions.forEach((i, j) => this.#ints[tail + 2 + j] = i);
    }
    els.forEach((el, i) => {
      const o = at + 1 + i * ELEM;
      const p = this.#ints;
      p[o] = steps[i];
      if (el instanceof LiteralElement) {
        if (steps[i] !== 0) throw UNSUPPORTED;
        const [s, n] = this.#string(el.key);
        p[o + 1] = E.Key;
        p[o + 2] = s;
        p[o + 3] = n;
        p[o + 4] = keyHash(el.key);
        p[o + 5] = arrayIndex(el.key);
      } else if (el instanceof ArrayElement) {
        if (el.type === "explicit") {
          p[o + 1] = E.Index;
          p[o + 2] = el.index;
        } else if (el.type === "append") {
          p[o + 1] = E.Append;
        } else if (el.type === "ref") {
          const ref = this.#ref(el.ref!, level, groups);
          p[o + 1] = E.IndexRef;
          p[o + 2] = ref.up;
          p[o + 3] = ref.group;
        } else if (el.type === "transpose") {
          const lookup = this.#lookup(el.transpose!, level, groups);
          this.#ints[o + 1] = E.IndexLookup;
          this.#ints[o + 2] = lookup;
        } else if (el.type === "hash") {
          // `[#n]`: how many children matched so far n levels up (the walker's hashCount).
          if (level - el.hashUp < 0) throw UNSUPPORTED;
          p[o + 1] = E.IndexCount;
          p[o + 2] = el.hashUp;
        } else {
          throw UNSUPPORTED;
        }
      } else if (el instanceof AmpElement) {
        if (steps[i] !== 0) throw UNSUPPORTED;
        const [tokens, count] = this.#ampTokens(el, level, groups);
        p[o + 1] = E.Amp;
        p[o + 2] = tokens;
        p[o + 3] = count;
      } else if (el instanceof TransposeElement) {
        if (steps[i] !== 0) throw UNSUPPORTED;
        const lookup = this.#lookup(el, level, groups);
        this.#ints[o + 1] = E.KeyLookup;
        this.#ints[o + 2] = lookup;
      } else {
        throw UNSUPPORTED;
      }
    });
    return at;
  }
}
