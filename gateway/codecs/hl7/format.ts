/**
 * The codec's JSON back to ER7. What parseHl7 made comes back byte for byte; JSON built or changed
 * by a middleware is checked as it is written (Hl7Error `bad_json` naming the place).
 */
import { Hl7Error } from "./error.ts";
import { DEFAULT_DELIMITERS, delimitersOf, type Hl7Delimiters } from "./delimiters.ts";
import { encodeLeaf } from "./escape.ts";
import { DEFAULT_HL7_LIMITS, type Hl7Limits } from "./limits.ts";
import { isHeaderSegment } from "./segments.ts";
import type { Hl7Json, Hl7Message, Hl7Terminator } from "./json.ts";

const SEGMENT_NAME = /^[A-Z][A-Z0-9]{2}$/;
const NUMBER = /^[1-9][0-9]{0,5}$/;
const SUB_KEY = /^([1-9][0-9]{0,5})\.([1-9][0-9]{0,5}|#)$/;

/** Where the writer is, for its errors. */
interface Place {
  segment: string;
  field?: number;
}

/** A `bad_json` error at a place. */
function bad(message: string, at: Place): Hl7Error {
  const where = at.field === undefined ? at.segment : `${at.segment}-${at.field}`;
  return new Hl7Error("bad_json", `${where}: ${message}`, at);
}

/** True for a plain JSON object. */
function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** A count key's value: a whole number from 0 to max. */
function countOf(v: unknown, max: number, what: string, at: Place): number {
  if (typeof v !== "number" || !Number.isInteger(v) || v < 0 || v > max) {
    throw bad(`${what} must be a whole number from 0 to ${max}`, at);
  }
  return v;
}

/** A leaf's ER7 text (numbers are accepted from middleware and written as text). */
function leafText(v: unknown, d: Hl7Delimiters, at: Place): string {
  if (v === null) return '""';
  if (typeof v === "string") return encodeLeaf(v, d);
  if (typeof v === "number" && Number.isFinite(v)) return String(v);
  throw bad(`a component must be a string, a number or null, found ${typeof v}`, at);
}

/** Strings joined with a separator, positions 1..n, missing ones empty. */
function joinPositions(values: Map<number, string>, count: number, sep: string): string {
  let out = "";
  for (let i = 1; i <= count; i++) {
    if (i > 1) out += sep;
    out += values.get(i) ?? "";
  }
  return out;
}

/** One repetition's ER7 text. */
function formatRepetition(rep: unknown, d: Hl7Delimiters, limits: Hl7Limits, at: Place): string {
  if (!isObject(rep)) return rep === undefined ? "" : leafText(rep, d, at);
  const max = limits.maxComponents;
  // component -> sub-component -> text
  const comps = new Map<number, Map<number, string>>();
  const subCounts = new Map<number, number>();
  let count = 0;
  const subsOf = (n: number) => {
    let subs = comps.get(n);
    if (subs === undefined) comps.set(n, subs = new Map());
    return subs;
  };
  for (const key in rep) {
    const value = rep[key];
    if (key === "#") {
      count = Math.max(count, countOf(value, max, `"#"`, at));
    } else if (NUMBER.test(key)) {
      const n = Number(key);
      if (n > max) throw bad(`component ${key} is past the limit of ${max}`, at);
      subsOf(n).set(1, leafText(value, d, at));
      count = Math.max(count, n);
    } else {
      const m = SUB_KEY.exec(key);
      if (m === null) throw bad(`${JSON.stringify(key)} is not a component key`, at);
      const n = Number(m[1]);
      if (n > max) throw bad(`component ${m[1]} is past the limit of ${max}`, at);
      count = Math.max(count, n);
      if (m[2] === "#") {
        subCounts.set(n, countOf(value, max, `"${key}"`, at));
        subsOf(n);
      } else {
        const s = Number(m[2]);
        if (s > max) throw bad(`sub-component ${key} is past the limit of ${max}`, at);
        subsOf(n).set(s, leafText(value, d, at));
      }
    }
  }
  const texts = new Map<number, string>();
  for (const [n, subs] of comps) {
    let subCount = subCounts.get(n) ?? 0;
    for (const s of subs.keys()) subCount = Math.max(subCount, s);
    texts.set(n, joinPositions(subs, subCount, d.subcomponent));
  }
  return joinPositions(texts, count, d.component);
}

/** One field's ER7 text: an array of repetitions (one repetition or a leaf accepted too). */
function formatField(field: unknown, d: Hl7Delimiters, limits: Hl7Limits, at: Place): string {
  if (!Array.isArray(field)) return formatRepetition(field, d, limits, at);
  if (field.length > limits.maxRepetitions) {
    throw bad(`more than ${limits.maxRepetitions} repetitions`, at);
  }
  let out = "";
  for (let i = 0; i < field.length; i++) {
    if (i > 0) out += d.repetition;
    out += formatRepetition(field[i], d, limits, at);
  }
  return out;
}

/** One segment's ER7 text (without its terminator). */
function formatSegment(name: string, seg: unknown, d: Hl7Delimiters, limits: Hl7Limits): string {
  if (!isObject(seg)) throw bad("a segment occurrence must be an object", { segment: name });
  const max = limits.maxFieldsPerSegment;
  const fields = new Map<number, string>();
  let count = 0;
  const header = isHeaderSegment(name);
  for (const key in seg) {
    if (key === "#") {
      count = Math.max(count, countOf(seg[key], max, `"#"`, { segment: name }));
      continue;
    }
    if (!NUMBER.test(key) || Number(key) > max) {
      throw bad(`${JSON.stringify(key)} is not a field number up to ${max}`, { segment: name });
    }
    const n = Number(key);
    count = Math.max(count, n);
    if (header && n <= 2) continue; // MSH-1 and MSH-2 are the delimiters
    fields.set(n, formatField(seg[key], d, limits, { segment: name, field: n }));
  }
  if (!header) return count === 0 ? name : name + d.field + joinPositions(fields, count, d.field);
  fields.set(2, d.encoding);
  // MSH-1 is the separator after the name: fields 2..n follow it.
  let out = name + d.field + d.encoding;
  for (let i = 3; i <= count; i++) out += d.field + (fields.get(i) ?? "");
  return out;
}

/** The delimiters a header segment's MSH-1/MSH-2 name (the defaults when they are left out). */
function delimitersOfSegment(seg: unknown, name: string): Hl7Delimiters {
  if (!isObject(seg)) return DEFAULT_DELIMITERS;
  const first = (v: unknown): unknown => Array.isArray(v) ? first(v[0]) : isObject(v) ? v["1"] : v;
  const field = first(seg["1"]);
  const encoding = first(seg["2"]);
  if (field === undefined && encoding === undefined) return DEFAULT_DELIMITERS;
  if (typeof field !== "string" || typeof encoding !== "string") {
    throw bad("MSH-1 and MSH-2 must be strings", { segment: name, field: 1 });
  }
  try {
    return delimitersOf(field, encoding);
  } catch (e) {
    throw bad((e as Error).message, { segment: name, field: 2 });
  }
}

/** Appends lines with a cap on their number. */
class Lines {
  readonly out: string[] = [];
  constructor(private readonly max: number) {}
  push(line: string): void {
    if (this.out.length >= this.max) {
      throw new Hl7Error("too_many_segments", `more than ${this.max} segments`);
    }
    this.out.push(line);
  }
}

/** A message's segments in order: `order` first, occurrences it leaves out after, by name. */
function formatMessage(
  msg: unknown,
  d: Hl7Delimiters,
  limits: Hl7Limits,
  lines: Lines,
): void {
  if (!isObject(msg) || !isObject(msg.segments)) {
    throw bad("a message must be an object with `segments`", { segment: "MSH" });
  }
  const segments = msg.segments as Record<string, unknown>;
  const used = new Map<string, number>();
  const take = (name: string): void => {
    const list = segments[name];
    if (list === undefined) return;
    if (!Array.isArray(list)) throw bad("must be an array of occurrences", { segment: name });
    const i = used.get(name) ?? 0;
    if (i >= list.length) return;
    used.set(name, i + 1);
    lines.push(formatSegment(name, list[i], d, limits));
  };
  for (const name in segments) {
    if (
      !SEGMENT_NAME.test(name) || name === "FHS" || name === "BHS" || name === "BTS" ||
      name === "FTS"
    ) {
      throw bad("is not a segment name of a message", { segment: name.slice(0, 16) });
    }
  }
  const order = msg.order ?? [];
  if (!Array.isArray(order)) throw bad("`order` must be an array of names", { segment: "MSH" });
  const first = order.length > 0 ? order[0] : "MSH";
  if (first !== "MSH" || !Array.isArray(segments.MSH) || segments.MSH.length === 0) {
    throw bad("a message starts with its MSH", { segment: "MSH" });
  }
  take("MSH");
  for (let i = 1; i < order.length; i++) {
    const name = order[i];
    if (typeof name !== "string") {
      throw bad("`order` must be an array of names", { segment: "MSH" });
    }
    take(name);
  }
  for (const name in segments) {
    const list = segments[name] as unknown[];
    if (!Array.isArray(list)) throw bad("must be an array of occurrences", { segment: name });
    while ((used.get(name) ?? 0) < list.length) take(name);
  }
}

/** The terminator a JSON names (`\r` unless it names `\n` or `\r\n`). */
function terminatorOf(json: Record<string, unknown>): Hl7Terminator {
  const t = json.terminator;
  return t === "\n" || t === "\r\n" ? t : "\r";
}

/**
 * Write the codec's JSON as ER7: segments in `order` (occurrences it does not list follow, by
 * name), each ended by `terminator` (`\r` by default; the last one too unless `unterminated`);
 * delimiters from MSH-1/MSH-2 (a batch's from its FHS, or its first BHS or MSH).
 */
export function formatHl7(json: Hl7Json, limits: Hl7Limits = DEFAULT_HL7_LIMITS): string {
  const top = json as unknown;
  if (!isObject(top)) throw bad("the JSON must be an object", { segment: "MSH" });
  const lines = new Lines(limits.maxSegments);
  if (Array.isArray(top.batches)) {
    const groups = top.batches as unknown[];
    const firstMsh = (): unknown => {
      for (const g of groups) {
        if (!isObject(g)) continue;
        if (g.BHS !== undefined) return g.BHS;
        const m = Array.isArray(g.messages) ? g.messages[0] : undefined;
        if (isObject(m) && isObject(m.segments) && Array.isArray(m.segments.MSH)) {
          return m.segments.MSH[0];
        }
      }
      return undefined;
    };
    const d = delimitersOfSegment(top.FHS ?? firstMsh(), "FHS");
    if (top.FHS !== undefined) lines.push(formatSegment("FHS", top.FHS, d, limits));
    for (const g of groups) {
      if (!isObject(g)) throw bad("a batch must be an object", { segment: "BHS" });
      if (g.BHS !== undefined) lines.push(formatSegment("BHS", g.BHS, d, limits));
      const messages = g.messages ?? [];
      if (!Array.isArray(messages)) throw bad("`messages` must be an array", { segment: "BHS" });
      for (const m of messages) formatMessage(m, d, limits, lines);
      if (g.BTS !== undefined) lines.push(formatSegment("BTS", g.BTS, d, limits));
    }
    if (top.FTS !== undefined) lines.push(formatSegment("FTS", top.FTS, d, limits));
  } else {
    const segments = top.segments;
    const msh = isObject(segments) && Array.isArray(segments.MSH) ? segments.MSH[0] : undefined;
    formatMessage(top, delimitersOfSegment(msh, "MSH"), limits, lines);
  }
  const t = terminatorOf(top);
  const text = lines.out.join(t);
  return top.unterminated === true || lines.out.length === 0 ? text : text + t;
}

/** True when `data` has the codec's JSON shape at its top (a message or a batch). */
export function looksLikeHl7Json(data: unknown): data is Hl7Json {
  if (!isObject(data)) return false;
  if (Array.isArray(data.batches)) return true;
  return isObject(data.segments) && Array.isArray((data.segments as Hl7Message["segments"]).MSH);
}
