/**
 * Small datasets (C-FIND identifiers and matches, retrieve keys) between DICOM JSON and the
 * uncompressed Little Endian syntaxes without dcmjs: its general writer and reader cost about 50 µs
 * per identifier each way, as much as a loopback round trip. Covers what queries and matches hold:
 * ASCII text, person names (alphabetic), numbers, sequences. Anything else (another character set,
 * binary values, attribute tags, private or unknown elements) answers undefined, and the caller
 * keeps dcmjs for that dataset.
 */
import { type DicomJson, type DicomJsonElement, TS, vrOf } from "../../dicom/mod.ts";

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

/** Growing output of the encoder. */
class Out {
  bytes = new Uint8Array(512);
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

/**
 * `json` encoded in `ts` (Implicit or Explicit VR Little Endian), elements in tag order; undefined
 * when it holds something this codec leaves to dcmjs.
 */
export function encodeIdentifier(json: DicomJson, ts: string): Uint8Array | undefined {
  const explicit = explicitOf(ts);
  if (explicit === undefined || !plainCharset(json[CHARSET])) return undefined;
  const out = new Out();
  return writeItems(out, utf8Charset(json), explicit) ? out.bytes.slice(0, out.at) : undefined;
}

/**
 * As dcmjs does, a character set given is said as ISO_IR 192 (UTF-8; the JSON's text is Unicode),
 * read and written: the same bytes for the ASCII text this codec takes.
 */
function utf8Charset(json: DicomJson): DicomJson {
  return json[CHARSET]?.Value?.length ? { ...json, [CHARSET]: UTF8 } : json;
}

const UTF8: DicomJsonElement = { vr: "CS", Value: ["ISO_IR 192"] };

function plainCharset(el: DicomJsonElement | undefined): boolean {
  const v = el?.Value;
  // Text is ASCII only (checked value by value): the same bytes in ISO_IR 6 and UTF-8.
  return !v || v.every((s) => s === null || s === "" || s === "ISO_IR 6" || s === "ISO_IR 192");
}

function writeItems(out: Out, json: DicomJson, explicit: boolean): boolean {
  const tags = Object.keys(json);
  let ordered = true;
  for (let i = 0; i < tags.length; i++) {
    if (!TAG_KEY.test(tags[i])) return false;
    if (i > 0 && tags[i - 1] >= tags[i]) ordered = false;
  }
  if (!ordered) tags.sort();
  for (const tag of tags) {
    const el = json[tag];
    if (typeof el !== "object" || el === null) return false;
    if (!writeElement(out, tag, el, explicit)) return false;
  }
  return true;
}

function writeElement(out: Out, tag: string, el: DicomJsonElement, explicit: boolean): boolean {
  if (el.InlineBinary !== undefined || el.BulkDataURI !== undefined) return false;
  const vr = typeof el.vr === "string" ? el.vr : vrOf(tag);
  const n = parseInt(tag, 16);
  // Group lengths and private elements are left to dcmjs (as are VRs it does not know here).
  if ((n & 0xffff) === 0 || (n >>> 16) % 2 === 1) return false;
  out.u16(n >>> 16);
  out.u16(n & 0xffff);
  if (explicit) {
    out.room(2);
    out.bytes[out.at++] = vr.charCodeAt(0);
    out.bytes[out.at++] = vr.charCodeAt(1);
  }
  const long = !explicit || LONG_VRS.has(vr);
  if (explicit && long) out.u16(0);
  const lengthAt = out.at;
  if (long) out.u32(0);
  else out.u16(0);
  const start = out.at;
  const values = el.Value ?? [];
  let ok: boolean;
  if (vr === "SQ") ok = writeSequence(out, values, explicit);
  else if (vr === "PN") ok = writeText(out, values.map(personName), vr);
  else if (TEXT_VRS.has(vr)) ok = writeText(out, values.map(textOf), vr);
  else if (vr === "IS" || vr === "DS") {
    ok = writeText(
      out,
      values.map((v) => numberText(v, vr)),
      vr,
    );
  } else if (vr in BINARY_NUMBERS) ok = writeNumbers(out, values, vr);
  else ok = false;
  if (!ok) return false;
  const length = out.at - start;
  if (long) out.view.setUint32(lengthAt, length, true);
  else if (length > 0xffff) return false;
  else out.view.setUint16(lengthAt, length, true);
  return true;
}

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
  if (Object.keys(pn).some((k) => k !== "Alphabetic")) return undefined;
  return typeof pn.Alphabetic === "string" ? pn.Alphabetic : undefined;
}

function numberText(v: unknown, vr: string): string | undefined {
  if (v === null || v === undefined) return "";
  if (typeof v === "string") return v;
  if (typeof v !== "number" || !Number.isFinite(v)) return undefined;
  if (vr === "IS" && !Number.isInteger(v)) return undefined;
  const s = String(v);
  return s.length <= (vr === "IS" ? 12 : 16) ? s : undefined;
}

function writeText(out: Out, values: (string | undefined)[], vr: string): boolean {
  if (values.some((v) => v === undefined)) return false;
  const text = (values as string[]).join("\\");
  const multiline = SINGLE_TEXT.has(vr);
  out.room(text.length + 1);
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c > 0x7e || (c < 0x20 && !(multiline && (c === 0x0a || c === 0x0d || c === 0x0c)))) {
      return false;
    }
    out.bytes[out.at++] = c;
  }
  if (text.length % 2 === 1) out.bytes[out.at++] = vr === "UI" ? 0 : 0x20;
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
  };
  const json = readItems(input, bytes.byteLength, false);
  if (!json || !plainCharset(json[CHARSET])) return undefined;
  return utf8Charset(json);
}

/** Elements up to `end`, or (`delimited`) to an item delimiter. */
function readItems(input: In, end: number, delimited: boolean): DicomJson | undefined {
  const elements: [string, DicomJsonElement][] = [];
  const { view, bytes } = input;
  while (input.at < end) {
    if (input.at + 8 > end) return undefined;
    const group = view.getUint16(input.at, true);
    const element = view.getUint16(input.at + 2, true);
    const n = (group * 0x10000 + element) >>> 0;
    if (n === ITEM_END) {
      if (!delimited) return undefined;
      input.at += 8;
      return sorted(elements);
    }
    if (group % 2 === 1 || element === 0 || group === 0xfffe) return undefined;
    const tag = hex(n);
    let vr: string;
    let length: number;
    if (input.explicit) {
      vr = String.fromCharCode(bytes[input.at + 4], bytes[input.at + 5]);
      if (LONG_VRS.has(vr)) {
        if (input.at + 12 > end) return undefined;
        length = view.getUint32(input.at + 8, true);
        input.at += 12;
      } else {
        length = view.getUint16(input.at + 6, true);
        input.at += 8;
      }
    } else {
      vr = implicitVr(n, tag);
      length = view.getUint32(input.at + 4, true);
      input.at += 8;
    }
    let el: DicomJsonElement | undefined;
    if (vr === "SQ") {
      el = readSequence(input, length, end);
    } else {
      if (length === UNDEFINED || input.at + length > end) return undefined;
      el = readValue(bytes.subarray(input.at, input.at + length), vr, input.view, input.at);
      input.at += length;
    }
    if (!el) return undefined;
    elements.push([tag, el]);
  }
  return delimited ? undefined : sorted(elements);
}

function sorted(elements: [string, DicomJsonElement][]): DicomJson {
  // Encoded datasets are in tag order: sorted only when one is not.
  let ordered = true;
  for (let i = 1; i < elements.length && ordered; i++) {
    ordered = elements[i - 1][0] < elements[i][0];
  }
  if (!ordered) elements.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const out: DicomJson = {};
  for (const [tag, el] of elements) out[tag] = el;
  return out;
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

function readSequence(input: In, length: number, end: number): DicomJsonElement | undefined {
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
      ? readItems(input, stop, true)
      : input.at + itemLength <= stop
      ? readItems(input, input.at + itemLength, false)
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

/** ASCII bytes as a string: short values without a TextDecoder call (an op each). */
function ascii(bytes: Uint8Array): string {
  if (bytes.byteLength > 64) return ASCII.decode(bytes);
  let out = "";
  for (let i = 0; i < bytes.byteLength; i++) out += String.fromCharCode(bytes[i]);
  return out;
}

function readValue(
  value: Uint8Array,
  vr: string,
  view: DataView,
  at: number,
): DicomJsonElement | undefined {
  if (vr in BINARY_NUMBERS) {
    const size = BINARY_NUMBERS[vr];
    if (value.byteLength % size !== 0) return undefined;
    const values: number[] = [];
    for (let i = at; i < at + value.byteLength; i += size) {
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
  let end = value.byteLength;
  let split = false;
  for (let i = 0; i < end; i++) {
    const c = value[i];
    if (c > 0x7e) return undefined;
    if (c === 0x5c) split = true;
  }
  // Trailing padding (spaces, NULs, whitespace) is not part of the value.
  while (end > 0 && (value[end - 1] <= 0x20)) end--;
  const raw = ascii(value.subarray(0, end));
  let values: (string | number | { Alphabetic: string } | null)[];
  if (SINGLE_TEXT.has(vr)) values = [raw];
  else if (!split) values = [raw.trimStart()];
  else values = raw.split("\\").map((s) => s.trim());
  if (vr === "PN") {
    if (raw.includes("=")) return undefined;
    values = values.map((s) => (s === "" ? null : { Alphabetic: s as string }));
  } else if (vr === "IS" || vr === "DS") {
    values = values.map((s) => {
      if (s === "") return null;
      const n = Number(s);
      return Number.isFinite(n) ? n : s;
    });
  } else {
    values = values.map((s) => (s === "" ? null : s));
  }
  return values.some((v) => v !== null) ? { vr, Value: values } : { vr };
}
