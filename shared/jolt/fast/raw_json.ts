/**
 * Raw JSON documents: UTF-8 bytes scanned once into a flat tape of nodes, read without building
 * JavaScript values, and written back out by copying byte ranges.
 *
 * This is what lets a shift run on a request body without `JSON.parse` and `JSON.stringify`:
 * the spec walks the tape, and leaf values it copies stay byte ranges until the output is
 * written. Output written from a tape is byte for byte what `JSON.stringify(JSON.parse(text))`
 * would give for the same values (numbers and escaped strings are re-spelled the way JSON.stringify
 * spells them). When a document could read differently as a JavaScript value than as a tape —
 * duplicate keys, keys that JavaScript orders as array indexes, bytes that are not valid UTF-8 —
 * the scan gives up ({@link scanJson} returns null) and the caller takes the parsed path, which
 * also owns the error message for malformed JSON.
 */

import { setKey } from "../json.ts";

/** Node kinds on the tape. */
export const Kind = {
  Null: 0,
  False: 1,
  True: 2,
  /** A number spelled as JavaScript writes it (see canonicalNumber): copied as is. */
  Int: 3,
  /** Any other number: re-spelled by `Number()` when written. */
  Number: 4,
  /** A string without escapes: its bytes are its JSON form. */
  String: 5,
  /** A string with backslash escapes. */
  EscapedString: 6,
  Array: 7,
  Object: 8,
} as const;
/** A node kind. */
export type Kind = (typeof Kind)[keyof typeof Kind];

const NULL = Kind.Null;
const FALSE = Kind.False;
const TRUE = Kind.True;
const INT = Kind.Int;
const NUMBER = Kind.Number;
const STRING = Kind.String;
const ESCAPED = Kind.EscapedString;
const ARRAY = Kind.Array;
const OBJECT = Kind.Object;

/** Ints per tape record: kind, start byte, end byte (containers: child count), next record. */
const REC = 4;
/** Deepest nesting a raw scan accepts (deeper documents take the parsed path). */
const MAX_DEPTH = 256;

const DECODER = new TextDecoder();
const ENCODER = new TextEncoder();

/**
 * A scanned document. Record `r` of the tape holds `[kind, start, end, next]`: for scalars the
 * byte range (strings without their quotes), for containers the child count in `end`, and `next`
 * is the record after the node and all its descendants. Object members are a key record
 * followed by the value's records; a key record holds {@link keyHash} of its text instead of
 * `next`, and its text is only made into a string when asked for ({@link key}).
 */
export class RawDoc {
  constructor(
    readonly bytes: Uint8Array,
    readonly tape: Int32Array,
    /** Texts of the keys that are not plain ASCII (decoded during the scan), by record. */
    readonly keys: (string | undefined)[],
    /** Per container record: the end byte when its bytes are written as they are, else -1. */
    readonly ends: Int32Array,
  ) {}

  /** The text of key record `k`. */
  key(k: number): string {
    const o = k * REC;
    const t = this.tape;
    if (t[o] !== STRING) return this.keys[k]!;
    return asciiKey(this.bytes, t[o + 1], t[o + 2], t[o + 3]);
  }

  /** True if key record `k` spells `key` (whose {@link keyHash} is `hash`). */
  #keyIs(k: number, key: string, hash: number): boolean {
    if (this.tape[k * REC + 3] !== hash) return false;
    return this.keyIs(k, key);
  }

  /** True if key record `k` spells `key`. */
  keyIs(k: number, key: string): boolean {
    const o = k * REC;
    const t = this.tape;
    if (t[o] !== STRING) return this.keys[k] === key;
    return sameAscii(key, this.bytes, t[o + 1], t[o + 2]);
  }

  kind(r: number): Kind {
    return this.tape[r * REC] as Kind;
  }

  /** The record after `r` and its descendants. */
  next(r: number): number {
    return this.tape[r * REC + 3];
  }

  /** Number of elements (arrays) or members (objects). */
  count(r: number): number {
    return this.tape[r * REC + 2];
  }

  /** The value record of member `key` (whose {@link keyHash} is `hash`) of object `r`, or -1. */
  member(r: number, key: string, hash: number): number {
    return this.memberFrom(r, r + 1, key, hash);
  }

  /**
   * {@link member}, searching from key record `from` (a member of `r`) to the end and then from
   * the start: lookups in the order the members come in cost one step each.
   */
  memberFrom(r: number, from: number, key: string, hash: number): number {
    const tape = this.tape;
    const end = tape[r * REC + 3];
    // A large object is searched through an index of its keys: a spec with many literal keys
    // over an object with many members would otherwise cost their product.
    if (tape[r * REC + 2] > SMALL_OBJECT) {
      if (from < end && tape[from * REC + 3] === hash && this.#keyIs(from, key, hash)) {
        return from + 1;
      }
      return this.indexedMember(r, key);
    }
    for (let k = from; k < end; k = tape[(k + 1) * REC + 3]) {
      if (tape[k * REC + 3] === hash && this.#keyIs(k, key, hash)) return k + 1;
    }
    for (let k = r + 1; k < from; k = tape[(k + 1) * REC + 3]) {
      if (tape[k * REC + 3] === hash && this.#keyIs(k, key, hash)) return k + 1;
    }
    return -1;
  }

  /** Index of the objects searched by {@link indexedMember}: key text -> value record. */
  #index: Map<number, Map<string, number>> | undefined;

  /**
   * The value record of member `key` of object `r`, or -1, through an index of the object's keys
   * built on first use (a scanned document has no duplicate keys).
   */
  indexedMember(r: number, key: string): number {
    const indexes = this.#index ??= new Map();
    let index = indexes.get(r);
    if (index === undefined) {
      index = new Map();
      const tape = this.tape;
      let k = r + 1;
      for (let count = tape[r * REC + 2]; count > 0; count--) {
        index.set(this.key(k), k + 1);
        k = tape[(k + 1) * REC + 3];
      }
      indexes.set(r, index);
    }
    return index.get(key) ?? -1;
  }

  /** The record of element `i` of array `r` (which has more than `i` elements). */
  element(r: number, i: number): number {
    let e = r + 1;
    while (i-- > 0) e = this.tape[e * REC + 3];
    return e;
  }

  /** The string of a string node. */
  string(r: number): string {
    const t = this.tape;
    const start = t[r * REC + 1];
    const end = t[r * REC + 2];
    if (t[r * REC] === ESCAPED) {
      return JSON.parse(DECODER.decode(this.bytes.subarray(start - 1, end + 1)));
    }
    return DECODER.decode(this.bytes.subarray(start, end));
  }

  /** The number of a number node. */
  number(r: number): number {
    const t = this.tape;
    const start = t[r * REC + 1];
    const end = t[r * REC + 2];
    const b = this.bytes;
    let i = start;
    const negative = b[i] === 0x2d;
    if (negative) i++;
    let v = 0;
    for (; i < end; i++) {
      const d = b[i] - 0x30;
      // Anything but a short integer: let Number() read it.
      if (d < 0 || d > 9 || i - start > 15) return Number(latin1(b, start, end));
      v = v * 10 + d;
    }
    return negative ? -v : v;
  }

  /** The JavaScript value of node `r`, as JSON.parse would build it (fresh containers). */
  value(r: number): unknown {
    switch (this.kind(r)) {
      case NULL:
        return null;
      case FALSE:
        return false;
      case TRUE:
        return true;
      case INT:
      case NUMBER:
        return this.number(r);
      case STRING:
      case ESCAPED:
        return this.string(r);
      case ARRAY: {
        const out: unknown[] = [];
        let e = r + 1;
        for (let n = this.count(r); n > 0; n--) {
          out.push(this.value(e));
          e = this.next(e);
        }
        return out;
      }
      case OBJECT: {
        const out: Record<string, unknown> = {};
        let k = r + 1;
        for (let n = this.count(r); n > 0; n--) {
          const key = this.key(k);
          const v = this.value(k + 1);
          if (key === "__proto__") {
            Object.defineProperty(out, key, {
              value: v,
              enumerable: true,
              writable: true,
              configurable: true,
            });
          } else {
            out[key] = v;
          }
          k = this.next(k + 1);
        }
        return out;
      }
    }
  }

  /**
   * A leaf value for an output: null and booleans as JavaScript values, everything else as its
   * tape position (a number), written by copying. In an output built from a tape, every number
   * is such a position: numbers of the input stay on the tape too.
   */
  leaf(r: number): unknown {
    const kind = this.kind(r);
    if (kind >= INT) return r;
    return kind === NULL ? null : kind === TRUE;
  }

  /** Node `r` with its containers made JavaScript ones and its other leaves as {@link leaf}s. */
  refValue(r: number): unknown {
    const kind = this.kind(r);
    if (kind === ARRAY) {
      const out: unknown[] = [];
      let e = r + 1;
      for (let n = this.count(r); n > 0; n--) {
        out.push(this.refValue(e));
        e = this.next(e);
      }
      return out;
    }
    if (kind === OBJECT) {
      const out: Record<string, unknown> = {};
      let k = r + 1;
      for (let n = this.count(r); n > 0; n--) {
        setKey(out, this.key(k), this.refValue(k + 1));
        k = this.next(k + 1);
      }
      return out;
    }
    return this.leaf(r);
  }

  /** Writes node `r` as JSON.stringify would write its value. */
  write(out: JsonWriter, r: number): void {
    const t = this.tape;
    const o = r * REC;
    switch (t[o] as Kind) {
      case NULL:
        return out.ascii("null");
      case FALSE:
        return out.ascii("false");
      case TRUE:
        return out.ascii("true");
      case INT:
        return out.bytes(this.bytes, t[o + 1], t[o + 2]);
      case NUMBER: {
        const spelled = respelled(this.bytes, t[o + 1], t[o + 2]);
        return spelled === null ? out.bytes(this.bytes, t[o + 1], t[o + 2]) : out.ascii(spelled);
      }
      case STRING:
        return out.bytes(this.bytes, t[o + 1] - 1, t[o + 2] + 1);
      case ESCAPED:
        return out.text(JSON.stringify(this.string(r)));
      case ARRAY: {
        if (this.ends[r] >= 0) return out.bytes(this.bytes, t[o + 1], this.ends[r]);
        out.byte(0x5b);
        let e = r + 1;
        for (let n = t[o + 2], i = 0; i < n; i++) {
          if (i > 0) out.byte(0x2c);
          this.write(out, e);
          e = t[e * REC + 3];
        }
        return out.byte(0x5d);
      }
      case OBJECT: {
        if (this.ends[r] >= 0) return out.bytes(this.bytes, t[o + 1], this.ends[r]);
        out.byte(0x7b);
        let k = r + 1;
        for (let n = t[o + 2], i = 0; i < n; i++) {
          if (i > 0) out.byte(0x2c);
          if (t[k * REC] === STRING) out.bytes(this.bytes, t[k * REC + 1] - 1, t[k * REC + 2] + 1);
          else out.quoted(this.keys[k]!);
          out.byte(0x3a);
          this.write(out, k + 1);
          k = t[(k + 1) * REC + 3];
        }
        return out.byte(0x7d);
      }
    }
  }
}

/**
 * Number spellings seen before (direct-mapped by a hash of their bytes) with what JavaScript
 * writes for them, null when that is the same text. Reading a long number and writing it back
 * is the slowest part of copying one, and documents repeat numbers; V8 keeps a similar cache for
 * its own number-to-string conversions.
 */
const NUMBER_TEXTS: (string | undefined)[] = new Array(256).fill(undefined);
const NUMBER_SPELLINGS: (string | null)[] = new Array(256).fill(null);

/** What JSON.stringify writes for the number spelled by these bytes, or null if the same. */
function respelled(b: Uint8Array, start: number, end: number): string | null {
  let hash = FNV_OFFSET;
  let integer = true;
  for (let i = start; i < end; i++) {
    const c = b[i];
    if (c === 0x2e || c === 0x65 || c === 0x45) integer = false;
    hash = Math.imul(hash ^ c, FNV_PRIME);
  }
  const slot = hash & 255;
  const text = NUMBER_TEXTS[slot];
  if (!integer && text !== undefined && sameAscii(text, b, start, end)) {
    return NUMBER_SPELLINGS[slot];
  }
  const own = latin1(b, start, end);
  // Often already JavaScript's spelling (0.1 + 0.2 written by a JavaScript client).
  const n = Number(own);
  const spelled = Number.isFinite(n) ? String(n) : "null";
  // Long integers are mostly identifiers (record numbers): not worth keeping, nor kept.
  if (integer) return spelled === own ? null : spelled;
  NUMBER_TEXTS[slot] = own;
  NUMBER_SPELLINGS[slot] = spelled === own ? null : spelled;
  return NUMBER_SPELLINGS[slot];
}

function latin1(b: Uint8Array, start: number, end: number): string {
  return DECODER.decode(b.subarray(start, end));
}

/**
 * The slab small JsonWriter results are cut from (see JsonWriter.result). It stays under the
 * gateway's 64 KiB malloc mmap threshold (GATEWAY_ENV): a slab at or over it is mapped fresh and
 * faulted in page by page (0.4 page faults per shifted request in the gateway, against 0.003 for
 * slabs malloc reuses from its heap).
 */
const SLAB_SIZE = 32 * 1024;
const SLAB_MAX = 4096;
let slab = new Uint8Array(0);
let slabUsed = 0;

/** A copy of `bytes` that stays valid: cut from the shared slab when small (JsonWriter.result). */
export function resultCopy(bytes: Uint8Array): Uint8Array {
  const n = bytes.length;
  if (n > SLAB_MAX) return bytes.slice();
  if (slabUsed + n > slab.length) {
    slab = new Uint8Array(SLAB_SIZE);
    slabUsed = 0;
  }
  const out = slab.subarray(slabUsed, slabUsed + n);
  out.set(bytes);
  slabUsed += (n + 7) & ~7; // each result starts 8-byte aligned
  return out;
}

/** Thrown by a {@link JsonWriter} asked to grow past its `limit`. */
export class JsonWriterLimit extends Error {}

/** A growable byte buffer that JSON is written into (fields public for the writers' loops). */
export class JsonWriter {
  buf: Uint8Array;
  len = 0;
  /** Most bytes it may hold; asking for room past them throws {@link JsonWriterLimit}. */
  limit = Infinity;

  constructor(capacity = 4096) {
    this.buf = new Uint8Array(capacity);
  }

  /** Makes room for `n` more bytes; returns the buffer to write them into. */
  room(n: number): Uint8Array {
    if (this.len + n <= this.buf.length) return this.buf;
    if (this.len + n > this.limit) throw new JsonWriterLimit(`over ${this.limit} bytes`);
    const next = new Uint8Array(Math.max(this.buf.length * 2, this.len + n));
    next.set(this.buf.subarray(0, this.len));
    return this.buf = next;
  }

  byte(b: number): void {
    this.room(1)[this.len++] = b;
  }

  bytes(src: Uint8Array, start: number, end: number): void {
    const n = end - start;
    const buf = this.room(n);
    let at = this.len;
    if (n < 64) {
      for (let i = start; i < end; i++) buf[at++] = src[i];
    } else {
      buf.set(src.subarray(start, end), at);
    }
    this.len += n;
  }

  /** Text known to be ASCII. */
  ascii(s: string): void {
    const buf = this.room(s.length);
    let at = this.len;
    for (let i = 0; i < s.length; i++) buf[at++] = s.charCodeAt(i);
    this.len = at;
  }

  /** A string as a JSON string literal (JSON.stringify's spelling). */
  quoted(s: string): void {
    const buf = this.room(s.length + 2);
    let at = this.len;
    buf[at++] = 0x22;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c < 0x20 || c === 0x22 || c === 0x5c || c > 0x7e) return this.text(JSON.stringify(s));
      buf[at++] = c;
    }
    buf[at++] = 0x22;
    this.len = at;
  }

  /** Any text, UTF-8 encoded. */
  text(s: string): void {
    const buf = this.room(s.length * 3);
    this.len += ENCODER.encodeInto(s, buf.subarray(this.len)).written;
  }

  /** True when a large output grew the buffer past what is worth keeping between uses. */
  get oversized(): boolean {
    return this.buf.length > 1024 * 1024;
  }

  /**
   * A copy of what was written. Small copies are cut from a shared slab, as Node's Buffer pool
   * does: allocating an ArrayBuffer costs far more than copying a few kilobytes, and one slab
   * serves dozens of results. A result keeps its slab alive, which is why large ones get their
   * own buffer.
   */
  result(): Uint8Array {
    return resultCopy(this.buf.subarray(0, this.len));
  }

  reset(): void {
    this.len = 0;
  }
}

/**
 * FNV-1a over the UTF-8 bytes of a key's text: how the tape tells keys apart before it compares
 * them. Spec keys are hashed once when compiled.
 */
export function keyHash(key: string): number {
  let hash = FNV_OFFSET;
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    if (c >= 0x80) return utf8Hash(ENCODER.encode(key));
    hash = Math.imul(hash ^ c, FNV_PRIME);
  }
  return hash;
}

function utf8Hash(bytes: Uint8Array): number {
  let hash = FNV_OFFSET;
  for (let i = 0; i < bytes.length; i++) hash = Math.imul(hash ^ bytes[i], FNV_PRIME);
  return hash;
}

const FNV_OFFSET = 0x811c9dc5 | 0;
const FNV_PRIME = 0x01000193;

/**
 * Key strings seen before, by hash (direct-mapped): most documents repeat the same field names,
 * and a cached string costs no allocation.
 */
const KEY_CACHE: (string | undefined)[] = new Array(1024).fill(undefined);

function asciiKey(b: Uint8Array, start: number, end: number, hash: number): string {
  const slot = hash & 1023;
  const cached = KEY_CACHE[slot];
  if (cached !== undefined && sameAscii(cached, b, start, end)) return cached;
  const key = DECODER.decode(b.subarray(start, end));
  KEY_CACHE[slot] = key;
  return key;
}

/** Reusable scan buffers. A document scanned into them is valid until the next scan. */
export class ScanScratch {
  /** True when a large document grew the buffers past what is worth keeping between scans. */
  get oversized(): boolean {
    return this.tape.length > 256 * 1024;
  }

  tape = new Int32Array(1024 * REC);
  /** Per container record: its end byte when its bytes are already canonical, else -1. */
  ends = new Int32Array(1024);
  keys: (string | undefined)[] = [];
  stack = new Int32Array(MAX_DEPTH + 1);
  /** Per open container: the irregularity count when it opened. */
  marks = new Int32Array(MAX_DEPTH + 1);
  /** Per open object: one bit per key hash seen (`hash >>> 27`), see scanJson. */
  seen = new Int32Array(MAX_DEPTH + 1);
  /** Per open object: its members so far. */
  members = new Int32Array(MAX_DEPTH + 1);
  /** Per open object past {@link SMALL_OBJECT} members: the key texts seen, for duplicates. */
  keySets: (Set<string> | undefined)[] = [];
}

/**
 * Members up to which an object's keys are compared pairwise (filtered by a 32-bit hash mask);
 * past it a set of key texts takes over, so an object with 100,000 keys costs linear time.
 */
export const SMALL_OBJECT = 32;

/** 1 for the bytes that stand for themselves inside a JSON string: not `"`, `\`, controls, non-ASCII. */
const STRING_BYTE = new Uint8Array(256);
for (let c = 0x20; c < 0x80; c++) if (c !== 0x22 && c !== 0x5c) STRING_BYTE[c] = 1;

/** The text of key record `k` during a scan: its bytes, or the decoded text of an escaped key. */
function keyText(b: Uint8Array, tape: Int32Array, keys: (string | undefined)[], k: number): string {
  return tape[k * REC] === STRING
    ? DECODER.decode(b.subarray(tape[k * REC + 1], tape[k * REC + 2]))
    : keys[k]!;
}

/**
 * Scans UTF-8 JSON into a tape. Returns null when the document is not valid JSON or must take
 * the parsed path (see the module doc); the caller then parses it normally. With `scratch`, the
 * tape lives in (and is valid until the next scan into) those buffers. Linear in the bytes: no
 * step looks back over more than {@link SMALL_OBJECT} earlier keys.
 */
export function scanJson(b: Uint8Array, scratch = new ScanScratch()): RawDoc | null {
  const n = b.length;
  let tape = scratch.tape;
  let ends = scratch.ends;
  const keys = scratch.keys;
  keys.length = 0; // the last document's escaped keys
  const stack = scratch.stack;
  const marks = scratch.marks;
  const seen = scratch.seen;
  // Counts what JSON.stringify would write differently (whitespace, escapes, number spellings):
  // a container with none inside is copied as one byte range.
  let irregular = 0;
  let depth = 0;
  let rec = 0;
  let i = 0;
  // A byte order mark is skipped, as TextDecoder does.
  if (n >= 3 && b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf) i = 3;
  while (i < n && isWhitespace(b[i])) i++;
  // True when the next thing to read is an object member's key (then its colon).
  let key = false;
  // Each turn reads one value (after its key, in an object), then the separators that follow it:
  // a comma leads to the next turn, a closing bracket ends a container.
  while (true) {
    if ((rec + 2) * REC > tape.length) {
      const grown = new Int32Array(tape.length * 2);
      grown.set(tape);
      tape = scratch.tape = grown;
      const grownEnds = new Int32Array(ends.length * 2);
      grownEnds.set(ends);
      ends = scratch.ends = grownEnds;
    }
    if (key) {
      key = false;
      if (b[i] !== 0x22) return null;
      const start = i + 1;
      let hash = FNV_OFFSET;
      let plain = true;
      i = start;
      while (true) {
        if (i >= n) return null;
        const c = b[i];
        if (c === 0x22) break;
        if (c < 0x20 || c === 0x5c || c >= 0x80) {
          plain = false;
          i = stringTail(b, i);
          if (i < 0) return null;
          break;
        }
        hash = Math.imul(hash ^ c, FNV_PRIME);
        i++;
      }
      const o = rec * REC;
      if (plain) {
        // JavaScript objects list array-index keys first, whatever order they came in.
        const c = b[start];
        if (c >= 0x30 && c <= 0x39 && isIndexKey(DECODER.decode(b.subarray(start, i)))) return null;
        tape[o] = STRING;
      } else {
        const text = stringValue(b, start, i);
        if (isIndexKey(text)) return null;
        hash = keyHash(text);
        keys[rec] = text;
        tape[o] = ESCAPED;
        // Only escapes are written differently: JSON.stringify leaves non-ASCII text alone.
        if (hasEscape(b, start, i)) irregular++;
      }
      tape[o + 1] = start;
      tape[o + 2] = i;
      tape[o + 3] = hash;
      // A repeated key: JSON.parse keeps the last value at the first key's place, so the tape
      // cannot stand for the document. A small object compares a key with the earlier ones
      // whose hash bit it has seen; a large one keeps the texts in a set (linear, and immune to
      // keys crafted to share a hash).
      const members = ++scratch.members[depth - 1];
      if (members > SMALL_OBJECT) {
        let set = scratch.keySets[depth - 1];
        if (set === undefined) {
          set = scratch.keySets[depth - 1] = new Set();
          const top = stack[depth - 1];
          for (let k = top + 1; k < rec; k = tape[(k + 1) * REC + 3]) {
            set.add(keyText(b, tape, keys, k));
          }
        }
        const text = keyText(b, tape, keys, rec);
        if (set.has(text)) return null;
        set.add(text);
      } else {
        const bit = 1 << (hash >>> 27);
        if ((seen[depth - 1] & bit) !== 0) {
          const top = stack[depth - 1];
          const text = keyText(b, tape, keys, rec);
          for (let k = top + 1; k < rec; k = tape[(k + 1) * REC + 3]) {
            if (tape[k * REC + 3] === hash && keyText(b, tape, keys, k) === text) return null;
          }
        }
        seen[depth - 1] |= bit;
      }
      rec++;
      i++;
      if (i < n && isWhitespace(b[i])) {
        irregular++;
        while (i < n && isWhitespace(b[i])) i++;
      }
      if (b[i++] !== 0x3a) return null;
      if (i < n && isWhitespace(b[i])) {
        irregular++;
        while (i < n && isWhitespace(b[i])) i++;
      }
    }
    // A value.
    if (i >= n) return null;
    const c = b[i];
    const o = rec * REC;
    if (c === 0x22) {
      const start = i + 1;
      let plain = true;
      i = start;
      while (true) {
        // Plain bytes first, one table lookup each.
        while (i < n && STRING_BYTE[b[i]] === 1) i++;
        if (i >= n) return null;
        const d = b[i];
        if (d === 0x22) break;
        plain = d >= 0x80;
        i = stringTail(b, i);
        if (i < 0) return null;
        if (plain && hasEscape(b, start, i)) plain = false;
        break;
      }
      if (!plain) irregular++;
      tape[o] = plain ? STRING : ESCAPED;
      tape[o + 1] = start;
      tape[o + 2] = i;
      tape[o + 3] = ++rec;
      i++;
    } else if (c === 0x7b || c === 0x5b) {
      if (depth >= MAX_DEPTH) return null;
      marks[depth] = irregular;
      seen[depth] = 0;
      scratch.members[depth] = 0;
      scratch.keySets[depth] = undefined;
      stack[depth++] = rec;
      tape[o] = c === 0x7b ? OBJECT : ARRAY;
      tape[o + 1] = i;
      tape[o + 2] = 0;
      rec++;
      i++;
      if (i < n && isWhitespace(b[i])) {
        irregular++;
        while (i < n && isWhitespace(b[i])) i++;
      }
      if (b[i] !== (c === 0x7b ? 0x7d : 0x5d)) {
        // The first member or element: the next turn reads it.
        key = c === 0x7b;
        continue;
      }
      // An empty container.
      i++;
      tape[o + 3] = rec;
      ends[rec - 1] = marks[depth - 1] === irregular ? i : -1;
      depth--;
    } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      const end = numberEnd(b, i);
      if (end < 0) return null;
      // The quick test first; a long number is read and written back (cached) to know.
      const canonical = canonicalNumber(b, i, end) || respelled(b, i, end) === null;
      if (!canonical) irregular++;
      tape[o] = canonical ? INT : NUMBER;
      tape[o + 1] = i;
      tape[o + 2] = end;
      tape[o + 3] = ++rec;
      i = end;
    } else {
      const kind = c === 0x74 ? TRUE : c === 0x66 ? FALSE : c === 0x6e ? NULL : -1;
      if (kind < 0) return null;
      const word = kind === TRUE ? "true" : kind === FALSE ? "false" : "null";
      for (let k = 1; k < word.length; k++) if (b[i + k] !== word.charCodeAt(k)) return null;
      tape[o] = kind;
      tape[o + 1] = i;
      tape[o + 2] = i + word.length;
      tape[o + 3] = ++rec;
      i += word.length;
    }
    // After a value: a comma and the next one, or the ends of the containers it closes.
    while (true) {
      if (i < n && isWhitespace(b[i])) {
        irregular++;
        while (i < n && isWhitespace(b[i])) i++;
      }
      if (depth === 0) return i === n ? new RawDoc(b, tape, keys, ends) : null;
      const top = stack[depth - 1];
      const t = top * REC;
      tape[t + 2]++;
      const d = b[i++];
      const object = tape[t] === OBJECT;
      if (d === 0x2c) {
        if (i < n && isWhitespace(b[i])) {
          irregular++;
          while (i < n && isWhitespace(b[i])) i++;
        }
        key = object;
        break;
      }
      if (d !== (object ? 0x7d : 0x5d)) return null;
      tape[t + 3] = rec;
      ends[top] = marks[depth - 1] === irregular ? i : -1;
      depth--;
    }
  }
}

function isWhitespace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/**
 * Validates the rest of a string from `i` (at an escape, a control byte or a non-ASCII byte);
 * returns the index of the closing quote, or -1 when the string is invalid or not valid UTF-8
 * (TextDecoder would turn such bytes into U+FFFD: the parsed path reproduces that).
 */
function stringTail(b: Uint8Array, i: number): number {
  const n = b.length;
  while (i < n) {
    const c = b[i];
    if (c === 0x22) return i;
    if (c < 0x20) return -1;
    if (c === 0x5c) {
      const e = b[i + 1];
      if (
        e === 0x22 || e === 0x5c || e === 0x2f || e === 0x62 || e === 0x66 || e === 0x6e ||
        e === 0x72 || e === 0x74
      ) {
        i += 2;
        continue;
      }
      if (e !== 0x75) return -1;
      for (let k = 2; k < 6; k++) {
        const h = b[i + k];
        if (!((h >= 0x30 && h <= 0x39) || (h >= 0x41 && h <= 0x46) || (h >= 0x61 && h <= 0x66))) {
          return -1;
        }
      }
      i += 6;
      continue;
    }
    if (c < 0x80) {
      i++;
      continue;
    }
    // UTF-8 (RFC 3629): no overlongs, no surrogates, nothing past U+10FFFF.
    const c1 = b[i + 1];
    if (c >= 0xc2 && c <= 0xdf) {
      if (!(c1 >= 0x80 && c1 <= 0xbf)) return -1;
      i += 2;
    } else if (c >= 0xe0 && c <= 0xef) {
      const lo = c === 0xe0 ? 0xa0 : 0x80;
      const hi = c === 0xed ? 0x9f : 0xbf;
      if (!(c1 >= lo && c1 <= hi) || !(b[i + 2] >= 0x80 && b[i + 2] <= 0xbf)) return -1;
      i += 3;
    } else if (c >= 0xf0 && c <= 0xf4) {
      const lo = c === 0xf0 ? 0x90 : 0x80;
      const hi = c === 0xf4 ? 0x8f : 0xbf;
      if (
        !(c1 >= lo && c1 <= hi) || !(b[i + 2] >= 0x80 && b[i + 2] <= 0xbf) ||
        !(b[i + 3] >= 0x80 && b[i + 3] <= 0xbf)
      ) {
        return -1;
      }
      i += 4;
    } else {
      return -1;
    }
  }
  return -1;
}

function hasEscape(b: Uint8Array, start: number, end: number): boolean {
  for (let i = start; i < end; i++) if (b[i] === 0x5c) return true;
  return false;
}

/** The text of a string whose bytes run from `start` to `end` (quotes excluded). */
function stringValue(b: Uint8Array, start: number, end: number): string {
  return hasEscape(b, start, end)
    ? JSON.parse(DECODER.decode(b.subarray(start - 1, end + 1)))
    : DECODER.decode(b.subarray(start, end));
}

/** The end of the JSON number at `i`, or -1 when it is malformed. */
function numberEnd(b: Uint8Array, i: number): number {
  if (b[i] === 0x2d) i++;
  if (b[i] === 0x30) {
    i++;
  } else if (b[i] >= 0x31 && b[i] <= 0x39) {
    while (b[i] >= 0x30 && b[i] <= 0x39) i++;
  } else {
    return -1;
  }
  if (b[i] === 0x2e) {
    i++;
    if (!(b[i] >= 0x30 && b[i] <= 0x39)) return -1;
    while (b[i] >= 0x30 && b[i] <= 0x39) i++;
  }
  if (b[i] === 0x65 || b[i] === 0x45) {
    i++;
    if (b[i] === 0x2b || b[i] === 0x2d) i++;
    if (!(b[i] >= 0x30 && b[i] <= 0x39)) return -1;
    while (b[i] >= 0x30 && b[i] <= 0x39) i++;
  }
  return i;
}

/**
 * True when JavaScript writes this number back exactly as it is spelled: no exponent, at most 15
 * significant digits (so no shorter decimal reads as the same double), no trailing zero after a
 * point, not `-0`, and not small enough for JavaScript to switch to exponent form (< 1e-6).
 */
function canonicalNumber(b: Uint8Array, start: number, end: number): boolean {
  let i = start;
  if (b[i] === 0x2d) i++;
  const intStart = i;
  while (i < end && b[i] !== 0x2e) {
    if (b[i] === 0x65 || b[i] === 0x45) return false;
    i++;
  }
  const intDigits = i - intStart;
  const zeroInt = intDigits === 1 && b[intStart] === 0x30;
  if (i === end) {
    // An integer: "-0" is written "0".
    if (zeroInt) return b[start] !== 0x2d;
    return intDigits <= 15;
  }
  const fracStart = i + 1;
  for (let k = fracStart; k < end; k++) if (b[k] === 0x65 || b[k] === 0x45) return false;
  if (b[end - 1] === 0x30) return false;
  let significant = end - fracStart;
  if (zeroInt) {
    let zeros = 0;
    while (b[fracStart + zeros] === 0x30) zeros++;
    if (zeros >= 6) return false;
    significant -= zeros;
  } else {
    significant += intDigits;
  }
  return significant <= 15;
}

function sameAscii(s: string, b: Uint8Array, start: number, end: number): boolean {
  if (s.length !== end - start) return false;
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) !== b[start + i]) return false;
  return true;
}

/** True for a canonical array index ("0" … "4294967294"), which objects order numerically. */
function isIndexKey(key: string): boolean {
  const c = key.charCodeAt(0);
  if (!(c >= 0x30 && c <= 0x39) || key.length > 10) return false;
  if (c === 0x30) return key.length === 1;
  for (let i = 1; i < key.length; i++) {
    const d = key.charCodeAt(i);
    if (d < 0x30 || d > 0x39) return false;
  }
  return Number(key) < 4294967295;
}
