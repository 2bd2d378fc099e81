/**
 * Shift over a raw JSON tape (raw_json.ts): the same walk as strategy.ts does over parsed values,
 * reading keys and children from the tape. Leaf values stay tape references until the output is
 * written, so a body is never parsed into objects nor serialized from them.
 *
 * Tape positions stand for input values: a record index, NULL_VALUE (tape_read.ts) for a null that has
 * no record, or {@link ABSENT_REF} for "nothing here" (the parsed walk's ABSENT).
 */

import { javaToString } from "./java.ts";
import type { Children, Strategy } from "./strategy.ts";
import { JsonWriter, Kind, RawDoc } from "./raw_json.ts";
import { ABSENT_REF } from "./tape_read.ts";
import type { ShiftOutput } from "./shift_write.ts";
import { indexKey, type WalkedPath } from "./walked_path.ts";

/** A shift spec node that can walk a tape. */
export interface RawChild {
  applyRaw(key: string, r: number, wp: WalkedPath, out: ShiftOutput, doc: RawDoc): boolean;
}

type RawChildren = Children<unknown>;

function raw(c: unknown): RawChild {
  return c as RawChild;
}

/** The output value for tape position `r` (see RawDoc.leaf). */
export function rawLeaf(doc: RawDoc, r: number): unknown {
  return r < 0 ? null : doc.leaf(r);
}

/** Runs `strategy` over the node at `r`. */
export function processRaw(
  node: RawChildren,
  strategy: Strategy,
  r: number,
  wp: WalkedPath,
  out: ShiftOutput,
  doc: RawDoc,
): void {
  if (r < 0) return;
  const kind = doc.kind(r);
  if (kind === Kind.Null) return;
  if (kind === Kind.Object) return processObject(node, strategy, r, wp, out, doc);
  if (kind === Kind.Array) return processArray(node, strategy, r, wp, out, doc);
  processScalar(node, strategy, javaToString(doc.value(r)), wp, out, doc);
}

function processObject(
  n: RawChildren,
  st: Strategy,
  r: number,
  wp: WalkedPath,
  out: ShiftOutput,
  doc: RawDoc,
): void {
  // Spec keys often come in the input's order: each search starts after the last member found.
  let from = r + 1;
  if (st === "availableLiterals" || st === "availableLiteralsWithComputed") {
    for (const l of n.literalList) {
      const v = doc.memberFrom(r, from, l.key, l.hash);
      if (v < 0) continue;
      from = doc.next(v);
      raw(l.child).applyRaw(l.key, v, wp, out, doc);
    }
  } else if (st === "allLiterals" || st === "allLiteralsWithComputed") {
    for (const l of n.literalList) {
      const v = doc.memberFrom(r, from, l.key, l.hash);
      if (v >= 0) from = doc.next(v);
      raw(l.child).applyRaw(l.key, v >= 0 ? v : ABSENT_REF, wp, out, doc);
    }
  }
  if (st === "availableLiterals" || st === "allLiterals") return;
  let k = r + 1;
  for (let count = doc.count(r); count > 0; count--) {
    const v = k + 1;
    applyKey(n, st, doc.key(k), v, wp, out, doc);
    k = doc.next(v);
  }
}

function processArray(
  n: RawChildren,
  st: Strategy,
  r: number,
  wp: WalkedPath,
  out: ShiftOutput,
  doc: RawDoc,
): void {
  const size = doc.count(r);
  if (st === "availableLiterals" || st === "availableLiteralsWithComputed") {
    for (const l of n.literalList) {
      if (l.index >= 0 && l.index < size) {
        raw(l.child).applyRaw(l.key, doc.element(r, l.index), wp, out, doc);
      }
    }
  } else if (st === "allLiterals" || st === "allLiteralsWithComputed") {
    for (const l of n.literalList) {
      const item = l.index >= 0 && l.index < size ? doc.element(r, l.index) : ABSENT_REF;
      raw(l.child).applyRaw(l.key, item, wp, out, doc);
    }
  }
  if (st === "availableLiterals" || st === "allLiterals") return;
  let e = r + 1;
  for (let i = 0; i < size; i++) {
    applyKey(n, st, indexKey(i), e, wp, out, doc);
    e = doc.next(e);
  }
}

function processScalar(
  n: RawChildren,
  st: Strategy,
  scalar: string,
  wp: WalkedPath,
  out: ShiftOutput,
  doc: RawDoc,
): void {
  // As strategy.ts: a scalar is matched as if it were a key with nothing under it.
  if (st !== "computed") {
    const lit = n.literals.get(scalar);
    if (lit) raw(lit).applyRaw(scalar, ABSENT_REF, wp, out, doc);
  }
  if (
    st === "computed" || st === "availableLiteralsWithComputed" || st === "allLiteralsWithComputed"
  ) {
    applyComputed(n.computed, scalar, ABSENT_REF, wp, out, doc);
  } else if (st === "conflict" && !n.literals.has(scalar)) {
    applyComputed(n.computed, scalar, ABSENT_REF, wp, out, doc);
  }
}

/** One member or element past the literals: its literal child (conflict), else computed ones. */
function applyKey(
  n: RawChildren,
  st: Strategy,
  key: string,
  r: number,
  wp: WalkedPath,
  out: ShiftOutput,
  doc: RawDoc,
): void {
  const lit = st === "conflict" ? n.literals.get(key) : undefined;
  if (lit) raw(lit).applyRaw(key, r, wp, out, doc);
  else applyComputed(n.computed, key, r, wp, out, doc);
}

function applyComputed(
  computed: RawChildren["computed"],
  key: string,
  r: number,
  wp: WalkedPath,
  out: ShiftOutput,
  doc: RawDoc,
): void {
  for (const c of computed) if (raw(c).applyRaw(key, r, wp, out, doc)) return;
}

/**
 * Writes a shift output (values, and numbers that are positions in `doc`) as JSON.stringify would.
 * The common cases (leaves copied from the input, plain ASCII keys) write into the writer's
 * buffer here rather than through its methods: this runs once per output value.
 */
export function writeOutput(w: JsonWriter, v: unknown, doc: RawDoc): void {
  if (typeof v === "number") {
    const t = doc.tape;
    const o = v * 4; // the tape's record size
    const kind = t[o];
    if (kind !== Kind.String && kind !== Kind.Int) return doc.write(w, v);
    // A string with its quotes, or a number as spelled.
    const start = kind === Kind.String ? t[o + 1] - 1 : t[o + 1];
    const end = kind === Kind.String ? t[o + 2] + 1 : t[o + 2];
    const buf = w.room(end - start);
    let at = w.len;
    const src = doc.bytes;
    if (end - start < 64) {
      for (let i = start; i < end; i++) buf[at++] = src[i];
    } else {
      buf.set(src.subarray(start, end), at);
      at += end - start;
    }
    w.len = at;
    return;
  }
  if (v === null) return w.ascii("null");
  if (typeof v === "object") {
    if (Array.isArray(v)) {
      w.byte(0x5b);
      for (let i = 0; i < v.length; i++) {
        if (i > 0) w.byte(0x2c);
        writeOutput(w, v[i], doc);
      }
      return w.byte(0x5d);
    }
    w.byte(0x7b);
    let first = true;
    const map = v as Record<string, unknown>;
    for (const key of Object.keys(map)) {
      const item = map[key];
      // As JSON.stringify: members without a JSON form are left out.
      if (item === undefined || typeof item === "function" || typeof item === "symbol") continue;
      // `,"key":` straight into the buffer when the key is plain ASCII.
      const buf = w.room(key.length + 4);
      let at = w.len;
      if (!first) buf[at++] = 0x2c;
      first = false;
      const keyAt = at;
      buf[at++] = 0x22;
      let plain = true;
      for (let i = 0; i < key.length; i++) {
        const c = key.charCodeAt(i);
        if (c < 0x20 || c === 0x22 || c === 0x5c || c > 0x7e) {
          plain = false;
          break;
        }
        buf[at++] = c;
      }
      if (plain) {
        buf[at++] = 0x22;
        buf[at++] = 0x3a;
        w.len = at;
      } else {
        w.len = keyAt;
        w.quoted(key);
        w.byte(0x3a);
      }
      writeOutput(w, item, doc);
    }
    return w.byte(0x7d);
  }
  switch (typeof v) {
    case "string":
      return w.quoted(v);
    case "boolean":
      return w.ascii(v ? "true" : "false");
    default:
      return w.ascii("null");
  }
}
