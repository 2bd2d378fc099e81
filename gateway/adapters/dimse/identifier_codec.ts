/**
 * Small datasets (C-FIND identifiers and matches, retrieve keys) between DICOM JSON and the
 * uncompressed Little Endian syntaxes without dcmjs: its general writer and reader cost about 50 µs
 * per identifier each way, as much as a loopback round trip. Covers what queries and matches hold:
 * ASCII text, person names (alphabetic), numbers, sequences. Anything else (another character set,
 * binary values, attribute tags, private or unknown elements) answers undefined, and the caller
 * keeps dcmjs for that dataset.
 */
import {
  type DicomJson,
  type DicomJsonElement,
  MAX_SEQUENCE_DEPTH,
  TS,
  vrOf,
} from "../../dicom/mod.ts";
import { copyOf } from "./slab.ts";

/** VRs whose explicit-VR length field is 32 bits (after two reserved bytes). */
const LONG_VRS = new Set(["OB", "OD", "OF", "OL", "OV", "OW", "SQ", "UC", "UN", "UR", "UT"]);
/** Text VRs (values joined with backslashes). */
const TEXT_VRS = new Set([
  "AE",
  "AS",
  "CS",
  "DA",
  "DT",
  "LO",
  "LT",
  "SH",
  "ST",
  "TM",
  "UC",
  "UI",
  "UR",
  "UT",
]);
/** Text VRs that hold one value, backslashes included, and keep leading spaces. */
const SINGLE_TEXT = new Set(["LT", "ST", "UT", "UR"]);
/** Binary numbers: byte size of one value. */
const BINARY_NUMBERS: Record<string, number> = { US: 2, SS: 2, UL: 4, SL: 4, FL: 4, FD: 8 };

const ITEM = 0xfffee000;
const ITEM_END = 0xfffee00d;
const SEQUENCE_END = 0xfffee0dd;
const UNDEFINED = 0xffffffff;
const CHARSET = "00080005";
const TAG_KEY = /^[0-9A-F]{8}$/;

function explicitOf(ts: string): boolean | undefined {
  if (ts === TS.implicitLE) return false;
  if (ts === TS.explicitLE) return true;
  return undefined;
}

/**
 * Output of the encoder: one buffer reused by every encoding (grown when a dataset needs more),
 * so an encoding allocates only its result.
 */
class Out {
  bytes = new Uint8Array(1024);
  view = new DataView(this.bytes.buffer);
  at = 0;

  room(n: number): void {
    if (this.at + n <= this.bytes.length) return;
    const next = new Uint8Array(Math.max(this.bytes.length * 2, this.at + n));
    next.set(this.bytes.subarray(0, this.at));
    this.bytes = next;
    this.view = new DataView(next.buffer);
  }

  u16(v: number): void {
    this.room(2);
    this.view.setUint16(this.at, v, true);
    this.at += 2;
  }

  u32(v: number): void {
    this.room(4);
    this.view.setUint32(this.at, v, true);
    this.at += 4;
  }
}

const OUT = new Out();

/**
 * `json` encoded in `ts` (Implicit or Explicit VR Little Endian), elements in tag order; undefined
 * when it holds something this codec leaves to dcmjs.
 */
export function encodeIdentifier(json: DicomJson, ts: string): Uint8Array | undefined {
  const explicit = explicitOf(ts);
  if (explicit === undefined || !plainCharset(json[CHARSET])) return undefined;
  const out = OUT;
  out.at = 0;
  return writeItems(out, json, explicit, true) ? copyOf(out.bytes.subarray(0, out.at)) : undefined;
}

const UTF8: DicomJsonElement = { vr: "CS", Value: ["ISO_IR 192"] };

/**
 * As dcmjs does, a character set given is said as ISO_IR 192 (UTF-8; the JSON's text is Unicode),
 * read and written: the same bytes for the ASCII text this codec takes.
 */
function utf8Charset(json: DicomJson): DicomJson {
  return json[CHARSET]?.Value?.length ? { ...json, [CHARSET]: UTF8 } : json;
}

function plainCharset(el: DicomJsonElement | undefined): boolean {
  const v = el?.Value;
  // Text is ASCII only (checked value by value): the same bytes in ISO_IR 6 and UTF-8.
  return !v || v.every((s) => s === null || s === "" || s === "ISO_IR 6" || s === "ISO_IR 192");
}

/** Tags as numbers by DICOM JSON key (valid keys only), cached: the same few recur. */
const TAG_NUMBERS = new Map<string, number>();

/** The tag of a DICOM JSON key (8 upper-case hex digits), or -1. */
function tagNumber(key: string): number {
  const known = TAG_NUMBERS.get(key);
  if (known !== undefined) return known;
  if (!TAG_KEY.test(key)) return -1;
  const n = parseInt(key, 16);
  if (TAG_NUMBERS.size < 4096) TAG_NUMBERS.set(key, n);
  return n;
}

function writeItems(out: Out, json: DicomJson, explicit: boolean, top = false): boolean {
  let previous = "";
  let ordered = true;
  let count = 0;
  for (const tag in json) {
    if (tagNumber(tag) < 0) return false;
    if (count++ > 0 && previous >= tag) ordered = false;
    previous = tag;
  }
  if (!ordered) {
    for (const tag of Object.keys(json).sort()) {
      if (!writeElement(out, tag, json[tag], explicit, top)) return false;
    }
    return true;
  }
  for (const tag in json) if (!writeElement(out, tag, json[tag], explicit, top)) return false;
  return true;
}

function writeElement(
  out: Out,
  tag: string,
  given: DicomJsonElement,
  explicit: boolean,
  top: boolean,
): boolean {
  if (typeof given !== "object" || given === null) return false;
  const el = top && tag === CHARSET && given.Value?.length ? UTF8 : given;
  if (el.InlineBinary !== undefined || el.BulkDataURI !== undefined) return false;
  const vr = typeof el.vr === "string" ? el.vr : vrOf(tag);
  const n = tagNumber(tag);
  // Group lengths and private elements are left to dcmjs (as are VRs it does not know here).
  if ((n & 0xffff) === 0 || (n >>> 16) % 2 === 1) return false;
  out.room(12);
  const view = out.view;
  view.setUint16(out.at, n >>> 16, true);
  view.setUint16(out.at + 2, n & 0xffff, true);
  out.at += 4;
  if (explicit) {
    out.bytes[out.at++] = vr.charCodeAt(0);
    out.bytes[out.at++] = vr.charCodeAt(1);
  }
  const long = !explicit || LONG_VRS.has(vr);
  if (explicit && long) {
    view.setUint16(out.at, 0, true);
    out.at += 2;
  }
  const lengthAt = out.at;
  out.at += long ? 4 : 2;
  const start = out.at;
  const values = el.Value ?? NO_VALUES;
  let ok: boolean;
  if (vr === "SQ") ok = writeSequence(out, values, explicit);
  else if (vr === "PN") ok = writeText(out, values, vr, personName);
  else if (TEXT_VRS.has(vr)) ok = writeText(out, values, vr, textOf);
  else if (vr === "IS") ok = writeText(out, values, vr, integerText);
  else if (vr === "DS") ok = writeText(out, values, vr, decimalText);
  else if (vr in BINARY_NUMBERS) ok = writeNumbers(out, values, vr);
  else ok = false;
  if (!ok) return false;
  const length = out.at - start;
  if (long) out.view.setUint32(lengthAt, length, true);
  else if (length > 0xffff) return false;
  else out.view.setUint16(lengthAt, length, true);
  return true;
}

const NO_VALUES: unknown[] = [];

function writeSequence(out: Out, items: unknown[], explicit: boolean): boolean {
  for (const item of items) {
    if (typeof item !== "object" || item === null || Array.isArray(item)) return false;
    out.u16(0xfffe);
    out.u16(0xe000);
    const lengthAt = out.at;
    out.u32(0);
    if (!writeItems(out, item as DicomJson, explicit)) return false;
    out.view.setUint32(lengthAt, out.at - lengthAt - 4, true);
  }
  return true;
}

function textOf(v: unknown): string | undefined {
  if (v === null || v === undefined) return "";
  return typeof v === "string" ? v : typeof v === "number" ? String(v) : undefined;
}

function personName(v: unknown): string | undefined {
  if (v === null || v === undefined) return "";
  if (typeof v === "string") return v;
  if (typeof v !== "object") return undefined;
  const pn = v as Record<string, unknown>;
  // Ideographic and phonetic names need another character set: dcmjs's business.
  for (const k in pn) if (k !== "Alphabetic") return undefined;
  return typeof pn.Alphabetic === "string" ? pn.Alphabetic : undefined;
}

function integerText(v: unknown): string | undefined {
  return numberText(v, "IS");
}

function decimalText(v: unknown): string | undefined {
  return numberText(v, "DS");
}

function numberText(v: unknown, vr: string): string | undefined {
  if (v === null || v === undefined) return "";
  if (typeof v === "string") return v;
  if (typeof v !== "number" || !Number.isFinite(v)) return undefined;
  if (vr === "IS" && !Number.isInteger(v)) return undefined;
  const s = String(v);
  return s.length <= (vr === "IS" ? 12 : 16) ? s : undefined;
}

/** Values as text joined by backslashes, padded to even length; false for what is not ASCII. */
function writeText(
  out: Out,
  values: unknown[],
  vr: string,
  asText: (v: unknown) => string | undefined,
): boolean {
  const multiline = SINGLE_TEXT.has(vr);
  const start = out.at;
  for (let v = 0; v < values.length; v++) {
    const text = asText(values[v]);
    if (text === undefined) return false;
    out.room(text.length + 2);
    const bytes = out.bytes;
    let at = out.at;
    if (v > 0) bytes[at++] = 0x5c;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c > 0x7e || (c < 0x20 && !(multiline && (c === 0x0a || c === 0x0d || c === 0x0c)))) {
        return false;
      }
      bytes[at++] = c;
    }
    out.at = at;
  }
  if ((out.at - start) % 2 === 1) {
    out.room(1);
    out.bytes[out.at++] = vr === "UI" ? 0 : 0x20;
  }
  return true;
}

function writeNumbers(out: Out, values: unknown[], vr: string): boolean {
  const size = BINARY_NUMBERS[vr];
  out.room(size * values.length);
  for (const v of values) {
    if (typeof v !== "number" || !Number.isFinite(v)) return false;
    const at = out.at;
    switch (vr) {
      case "US":
        if (!Number.isInteger(v) || v < 0 || v > 0xffff) return false;
        out.view.setUint16(at, v, true);
        break;
      case "SS":
        if (!Number.isInteger(v) || v < -0x8000 || v > 0x7fff) return false;
        out.view.setInt16(at, v, true);
        break;
      case "UL":
        if (!Number.isInteger(v) || v < 0 || v > 0xffffffff) return false;
        out.view.setUint32(at, v, true);
        break;
      case "SL":
        if (!Number.isInteger(v) || v < -0x80000000 || v > 0x7fffffff) return false;
        out.view.setInt32(at, v, true);
        break;
      case "FL":
        out.view.setFloat32(at, v, true);
        break;
      default:
        out.view.setFloat64(at, v, true);
    }
    out.at += size;
  }
  return true;
}

/** Reading position over dataset bytes. */
interface In {
  bytes: Uint8Array;
  view: DataView;
  at: number;
  explicit: boolean;
  /** The VR and value length of the element whose header was read last (readHeader). */
  vr: string;
  length: number;
}

/**
 * Reads the header of element `n` (`tag`: its hex form, when made already) at `input.at` into
 * `input.vr` and `input.length`, and moves past it; false when the header is cut short.
 */
function readHeader(input: In, n: number, tag: string | undefined, end: number): boolean {
  const { bytes, view } = input;
  if (input.explicit) {
    input.vr = explicitVr(bytes[input.at + 4], bytes[input.at + 5]);
    if (LONG_VRS.has(input.vr)) {
      if (input.at + 12 > end) return false;
      input.length = view.getUint32(input.at + 8, true);
      input.at += 12;
    } else {
      input.length = view.getUint16(input.at + 6, true);
      input.at += 8;
    }
  } else {
    input.vr = implicitVr(n, tag ?? hex(n));
    input.length = view.getUint32(input.at + 4, true);
    input.at += 8;
  }
  return true;
}

/**
 * DICOM JSON of dataset bytes in `ts` (Implicit or Explicit VR Little Endian), as the dcmjs path
 * (readDataset, toDicomJson) gives it; undefined when they hold something this codec leaves to
 * dcmjs.
 */
export function decodeIdentifier(bytes: Uint8Array, ts: string): DicomJson | undefined {
  const explicit = explicitOf(ts);
  if (explicit === undefined) return undefined;
  const input: In = {
    bytes,
    view: new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength),
    at: 0,
    explicit,
    vr: "",
    length: 0,
  };
  const json = readItems(input, bytes.byteLength, false, 0);
  if (!json || !plainCharset(json[CHARSET])) return undefined;
  return utf8Charset(json);
}

/**
 * Top-level element `tag` of dataset bytes in `ts`, decoded as decodeIdentifier decodes it; null
 * when the dataset does not hold it, undefined when this codec cannot tell (then decode it all).
 * Elements are in tag order: the walk stops at the first one past `tag`.
 */
export function decodeElement(
  bytes: Uint8Array,
  ts: string,
  tag: number,
): DicomJsonElement | null | undefined {
  const explicit = explicitOf(ts);
  if (explicit === undefined) return undefined;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const input: In = { bytes, view, at: 0, explicit, vr: "", length: 0 };
  const end = bytes.byteLength;
  while (input.at < end) {
    if (input.at + 8 > end) return undefined;
    const n = (view.getUint16(input.at, true) * 0x10000 + view.getUint16(input.at + 2, true)) >>>
      0;
    if (n > tag) return null;
    if (!readHeader(input, n, undefined, end)) return undefined;
    const { vr, length } = input;
    if (vr === "SQ") {
      const sq = readSequence(input, length, end, 1);
      if (!sq) return undefined;
      if (n === tag) return sq;
      continue;
    }
    if (length === UNDEFINED || input.at + length > end) return undefined;
    if (n === tag) return readValue(bytes, input.at, length, vr, view);
    input.at += length;
  }
  return null;
}

/**
 * Elements up to `end`, or (`delimited`) to an item delimiter; `depth` sequences deep (past
 * MAX_SEQUENCE_DEPTH: undefined, for the full decoder to refuse).
 */
function readItems(
  input: In,
  end: number,
  delimited: boolean,
  depth: number,
): DicomJson | undefined {
  const out: DicomJson = {};
  // Encoded datasets are in tag order: sorted afterwards only when one is not.
  let previous = -1;
  let ordered = true;
  const { view, bytes } = input;
  while (input.at < end) {
    if (input.at + 8 > end) return undefined;
    const group = view.getUint16(input.at, true);
    const element = view.getUint16(input.at + 2, true);
    const n = (group * 0x10000 + element) >>> 0;
    if (n === ITEM_END) {
      if (!delimited) return undefined;
      input.at += 8;
      return ordered ? out : sorted(out);
    }
    if (group % 2 === 1 || element === 0 || group === 0xfffe) return undefined;
    const tag = hex(n);
    if (!readHeader(input, n, tag, end)) return undefined;
    const { vr, length } = input;
    let el: DicomJsonElement | undefined;
    if (vr === "SQ") {
      el = readSequence(input, length, end, depth + 1);
    } else {
      if (length === UNDEFINED || input.at + length > end) return undefined;
      el = readValue(bytes, input.at, length, vr, view);
      input.at += length;
    }
    if (!el) return undefined;
    if (n <= previous) ordered = false;
    previous = n;
    out[tag] = el;
  }
  if (delimited) return undefined;
  return ordered ? out : sorted(out);
}

/** The elements of `json` in tag order. */
function sorted(json: DicomJson): DicomJson {
  const out: DicomJson = {};
  for (const tag of Object.keys(json).sort()) out[tag] = json[tag];
  return out;
}

/** Explicit VRs as strings, by their two bytes, cached. */
const EXPLICIT_VRS = new Map<number, string>();

function explicitVr(a: number, b: number): string {
  const key = (a << 8) | b;
  let vr = EXPLICIT_VRS.get(key);
  if (vr === undefined) {
    vr = String.fromCharCode(a, b);
    if (EXPLICIT_VRS.size < 1024) EXPLICIT_VRS.set(key, vr);
  }
  return vr;
}

/** Tags as DICOM JSON keys and their implicit VRs, cached: the same few recur in every message. */
const TAG_KEYS = new Map<number, string>();
const IMPLICIT_VRS = new Map<number, string>();

function hex(n: number): string {
  let key = TAG_KEYS.get(n);
  if (key === undefined) {
    key = n.toString(16).toUpperCase().padStart(8, "0");
    if (TAG_KEYS.size < 4096) TAG_KEYS.set(n, key);
  }
  return key;
}

function implicitVr(n: number, tag: string): string {
  let vr = IMPLICIT_VRS.get(n);
  if (vr === undefined) {
    vr = vrOf(tag);
    if (IMPLICIT_VRS.size < 4096) IMPLICIT_VRS.set(n, vr);
  }
  return vr;
}

function readSequence(
  input: In,
  length: number,
  end: number,
  depth: number,
): DicomJsonElement | undefined {
  if (depth > MAX_SEQUENCE_DEPTH) return undefined;
  const stop = length === UNDEFINED ? end : input.at + length;
  if (stop > end) return undefined;
  const items: DicomJson[] = [];
  const { view } = input;
  while (input.at < stop) {
    if (input.at + 8 > stop) return undefined;
    const n = itemTag(input);
    const itemLength = view.getUint32(input.at + 4, true);
    if (n === SEQUENCE_END) {
      if (length !== UNDEFINED) return undefined;
      input.at += 8;
      return sequence(items);
    }
    if (n !== ITEM) return undefined;
    input.at += 8;
    const item = itemLength === UNDEFINED
      ? readItems(input, stop, true, depth)
      : input.at + itemLength <= stop
      ? readItems(input, input.at + itemLength, false, depth)
      : undefined;
    if (!item) return undefined;
    items.push(item);
  }
  return length === UNDEFINED ? undefined : sequence(items);
}

function itemTag(input: In): number {
  return (input.view.getUint16(input.at, true) * 0x10000 +
    input.view.getUint16(input.at + 2, true)) >>>
    0;
}

function sequence(items: DicomJson[]): DicomJsonElement {
  return items.length ? { vr: "SQ", Value: items } : { vr: "SQ" };
}

const ASCII = new TextDecoder("latin1");

/** ASCII bytes `start` to `end` as a string: short values without a TextDecoder call (an op). */
function ascii(bytes: Uint8Array, start: number, end: number): string {
  if (end - start > 64) return ASCII.decode(bytes.subarray(start, end));
  let out = "";
  for (let i = start; i < end; i++) out += String.fromCharCode(bytes[i]);
  return out;
}

/** A text value: trimmed as dcmjs trims it; null when empty. */
function textValue(s: string, vr: string): string | number | { Alphabetic: string } | null {
  if (s === "") return null;
  if (vr === "PN") return { Alphabetic: s };
  if (vr === "IS" || vr === "DS") {
    const n = Number(s);
    return Number.isFinite(n) ? n : s;
  }
  return s;
}

function readValue(
  bytes: Uint8Array,
  at: number,
  length: number,
  vr: string,
  view: DataView,
): DicomJsonElement | undefined {
  if (vr in BINARY_NUMBERS) {
    const size = BINARY_NUMBERS[vr];
    if (length % size !== 0) return undefined;
    const values: number[] = [];
    for (let i = at; i < at + length; i += size) {
      values.push(
        vr === "US"
          ? view.getUint16(i, true)
          : vr === "SS"
          ? view.getInt16(i, true)
          : vr === "UL"
          ? view.getUint32(i, true)
          : vr === "SL"
          ? view.getInt32(i, true)
          : vr === "FL"
          ? view.getFloat32(i, true)
          : view.getFloat64(i, true),
      );
    }
    return values.length ? { vr, Value: values } : { vr };
  }
  const text = vr === "PN" || vr === "IS" || vr === "DS" || TEXT_VRS.has(vr);
  if (!text) return undefined;
  let end = at + length;
  let split = false;
  for (let i = at; i < end; i++) {
    const c = bytes[i];
    if (c > 0x7e) return undefined;
    if (c === 0x5c) split = true;
    if (c === 0x3d && vr === "PN") return undefined;
  }
  // Trailing padding (spaces, NULs, whitespace) is not part of the value.
  while (end > at && bytes[end - 1] <= 0x20) end--;
  if (end === at) return { vr };
  const raw = ascii(bytes, at, end);
  if (SINGLE_TEXT.has(vr) || !split) {
    const value = textValue(SINGLE_TEXT.has(vr) ? raw : raw.trimStart(), vr);
    return value === null ? { vr } : { vr, Value: [value] };
  }
  const values = raw.split("\\");
  let any = false;
  for (let i = 0; i < values.length; i++) {
    const value = textValue((values[i] as string).trim(), vr);
    (values as unknown[])[i] = value;
    if (value !== null) any = true;
  }
  return any ? { vr, Value: values } : { vr };
}
