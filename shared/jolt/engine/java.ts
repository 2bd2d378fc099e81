/**
 * Java behaviours JOLT relies on, re-expressed for JSON values in JavaScript: String.split,
 * Integer.parseInt, Object.toString, number boxing (Integer / Long / Double) and its conversions.
 *
 * JavaScript has one number type, so a JSON number is classified the way Jackson would box it:
 * an integral value in int32 range is an Integer, other integral values are Longs, anything with
 * a fraction is a Double. (A JSON "3.0" parses to 3 and so counts as an Integer here.)
 */

import { isMap, type JsonMap } from "../json.ts";
import { compileSeparator } from "./separator.ts";
import { chargeOutput, chargeSteps } from "./limits.ts";

/** Java's boxed number classes as far as JOLT can tell them apart. */
export type NumKind = "int" | "long" | "double";

const INT_MIN = -2147483648;
const INT_MAX = 2147483647;
const LONG_MIN = -9223372036854775808;
const LONG_MAX = 9223372036854775807;

/** How Jackson would box this number. */
export function numKind(n: number): NumKind {
  if (!Number.isInteger(n)) return "double";
  return n >= INT_MIN && n <= INT_MAX ? "int" : "long";
}

/** True for a number Jackson would box as Integer. */
export function isJavaInt(v: unknown): v is number {
  return typeof v === "number" && Number.isInteger(v) && v >= INT_MIN && v <= INT_MAX;
}

/** True for a number Jackson would box as Long. */
export function isJavaLong(v: unknown): v is number {
  return typeof v === "number" && Number.isInteger(v) && (v < INT_MIN || v > INT_MAX);
}

/** True for a number Jackson would box as Double. */
export function isJavaDouble(v: unknown): v is number {
  return typeof v === "number" && !Number.isInteger(v);
}

/** Number.intValue(): truncation for Doubles (saturating), low 32 bits for Longs. */
export function intValue(n: number, kind: NumKind = numKind(n)): number {
  if (Number.isNaN(n)) return 0;
  if (kind === "double") {
    if (n >= INT_MAX) return INT_MAX;
    if (n <= INT_MIN) return INT_MIN;
    return Math.trunc(n) | 0;
  }
  if (n >= INT_MIN && n <= INT_MAX) return n;
  return Number(BigInt.asIntN(32, BigInt(n)));
}

/** Number.longValue(): truncation for Doubles (saturating at the long range). */
export function longValue(n: number): number {
  if (Number.isNaN(n)) return 0;
  if (n >= LONG_MAX) return LONG_MAX;
  if (n <= LONG_MIN) return LONG_MIN;
  return Math.trunc(n);
}

/** Java's Integer.parseInt: optional sign, ASCII digits, int32 range; null if not. */
export function parseJavaInt(s: string): number | null {
  const len = s.length;
  if (len > 0 && len < 10) {
    // Fast path for the common case: a short run of digits (array indexes).
    let n = 0;
    let i = 0;
    for (; i < len; i++) {
      const c = s.charCodeAt(i);
      if (c < 48 || c > 57) break;
      n = n * 10 + (c - 48);
    }
    if (i === len) return n;
  }
  const n = parseIntegral(s);
  return n !== null && n >= INT_MIN && n <= INT_MAX ? n : null;
}

/** Java's Long.parseLong (precision beyond 2^53 is that of a JS number); null if not. */
export function parseJavaLong(s: string): number | null {
  const n = parseIntegral(s);
  return n !== null && n >= LONG_MIN && n <= LONG_MAX ? n : null;
}

function parseIntegral(s: string): number | null {
  const len = s.length;
  let i = 0;
  if (len === 0) return null;
  const c0 = s.charCodeAt(0);
  if (c0 === 43 /* + */ || c0 === 45 /* - */) {
    if (len === 1) return null;
    i = 1;
  }
  for (let j = i; j < len; j++) {
    const c = s.charCodeAt(j);
    if (c < 48 || c > 57) return null;
  }
  const n = Number(s);
  return c0 === 45 && n === 0 ? 0 : n;
}

/** Java's Double.parseDouble (decimal forms, NaN, Infinity, f/d suffix); null if not. */
export function parseJavaDouble(s: string): number | null {
  const t = javaTrim(s);
  let i = 0;
  const len = t.length;
  if (len === 0) return null;
  let sign = "";
  if (t[0] === "+" || t[0] === "-") {
    sign = t[0];
    i = 1;
  }
  const rest = t.slice(i);
  if (rest === "NaN") return NaN;
  if (rest === "Infinity") return sign === "-" ? -Infinity : Infinity;
  let body = rest;
  const last = body.charCodeAt(body.length - 1);
  // Java accepts a float/double type suffix.
  if (last === 102 || last === 70 || last === 100 || last === 68) body = body.slice(0, -1);
  let j = 0;
  let digits = 0;
  while (j < body.length && isDigit(body.charCodeAt(j))) j++, digits++;
  if (j < body.length && body[j] === ".") {
    j++;
    while (j < body.length && isDigit(body.charCodeAt(j))) j++, digits++;
  }
  if (digits === 0) return null;
  if (j < body.length && (body[j] === "e" || body[j] === "E")) {
    j++;
    if (j < body.length && (body[j] === "+" || body[j] === "-")) j++;
    const start = j;
    while (j < body.length && isDigit(body.charCodeAt(j))) j++;
    if (j === start) return null;
  }
  if (j !== body.length) return null;
  return Number(sign + body);
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

/** A number parsed from a string, with the box Java would have picked. */
export interface KindedNumber {
  value: number;
  kind: NumKind;
}

/**
 * JOLT's Objects.toNumber: numbers as they are; strings tried as Integer, Long, then Double.
 * Returns null when there is no number.
 */
export function toKindedNumber(arg: unknown): KindedNumber | null {
  if (typeof arg === "number") return { value: arg, kind: numKind(arg) };
  if (typeof arg !== "string") return null;
  const i = parseJavaInt(arg);
  if (i !== null) return { value: i, kind: "int" };
  const l = parseJavaLong(arg);
  if (l !== null) return { value: l, kind: "long" };
  const d = parseJavaDouble(arg);
  if (d !== null) return { value: d, kind: "double" };
  return null;
}

/** String.trim(): strips chars <= U+0020 at both ends. */
export function javaTrim(s: string): string {
  let a = 0;
  let b = s.length;
  while (a < b && s.charCodeAt(a) <= 32) a++;
  while (b > a && s.charCodeAt(b - 1) <= 32) b--;
  return a === 0 && b === s.length ? s : s.slice(a, b);
}

/** StringTools.isBlank: empty or only whitespace. */
export function isBlank(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    // Java's Character.isWhitespace for the ASCII and common Unicode spaces.
    if (
      !(c === 32 || (c >= 9 && c <= 13) || (c >= 28 && c <= 31) || c === 0x1680 ||
        (c >= 0x2000 && c <= 0x2006) || (c >= 0x2008 && c <= 0x200a) || c === 0x2028 ||
        c === 0x2029 || c === 0x205f || c === 0x3000)
    ) return false;
  }
  return true;
}

/** Non-overlapping occurrences of `sub` in `s` (StringTools.countMatches). */
export function countMatches(s: string, sub: string): number {
  if (s.length === 0 || sub.length === 0) return 0;
  let count = 0;
  let i = s.indexOf(sub);
  while (i !== -1) {
    count++;
    i = s.indexOf(sub, i + sub.length);
  }
  return count;
}

/** String.split with a literal one-char separator: trailing empty strings are dropped. */
export function javaSplitLiteral(s: string, sep: string): string[] {
  if (s.length === 0) return [""];
  const parts = s.split(sep);
  let n = parts.length;
  while (n > 0 && parts[n - 1] === "") n--;
  return n === parts.length ? parts : parts.slice(0, n);
}

const splitCache = new Map<string, RegExp | null>();

/**
 * String.split(regex) with Java's rules: trailing empty strings dropped, no leading empty string
 * from a zero-width match at 0. The separator is a (JavaScript-compiled) regular expression, as
 * in JOLT's split function, run in linear time (separator.ts); a pattern that does not compile, or
 * whose time could grow faster than the value, yields null.
 */
export function javaSplitRegex(s: string, pattern: string): string[] | null {
  let re = splitCache.get(pattern);
  if (re === undefined) {
    const compiled = compileSeparator(pattern);
    re = "re" in compiled ? compiled.re : null;
    if (splitCache.size < 256) splitCache.set(pattern, re);
  }
  if (re === null) return null;
  re.lastIndex = 0;
  const out: string[] = [];
  let index = 0;
  let m: RegExpExecArray | null;
  while ((m = re.exec(s)) !== null) {
    const start = m.index;
    const end = start + m[0].length;
    if (end === start) re.lastIndex++;
    if (start === 0 && end === 0) continue;
    // Each piece is a value the run makes (an empty separator splits 10 MB into 10 million).
    chargeSteps(1);
    chargeOutput(1);
    out.push(s.slice(index, start));
    index = end;
  }
  if (out.length === 0) return [s];
  out.push(s.slice(index));
  let n = out.length;
  while (n > 0 && out[n - 1] === "") n--;
  return out.slice(0, n);
}

/** StringTools-free port of JOLT's removeEscapedValues: drops escape chars and what they escape. */
export function removeEscapedValues(key: string): string {
  let out = "";
  let prevWasEscape = false;
  for (let i = 0; i < key.length; i++) {
    const c = key[i];
    if (c === "\\") {
      prevWasEscape = !prevWasEscape;
    } else {
      if (!prevWasEscape) out += c;
      prevWasEscape = false;
    }
  }
  return out;
}

/** Port of JOLT's removeEscapeChars: drops escape chars, keeps what they escape. */
export function removeEscapeChars(key: string): string {
  let out = "";
  let prevWasEscape = false;
  for (let i = 0; i < key.length; i++) {
    const c = key[i];
    if (c === "\\") {
      if (prevWasEscape) {
        out += c;
        prevWasEscape = false;
      } else {
        prevWasEscape = true;
      }
    } else {
      out += c;
      prevWasEscape = false;
    }
  }
  return out;
}

/** Double.toString for a non-integral double. */
function doubleToString(d: number): string {
  if (Number.isNaN(d)) return "NaN";
  if (d === Infinity) return "Infinity";
  if (d === -Infinity) return "-Infinity";
  const abs = Math.abs(d);
  if (abs >= 1e-3 && abs < 1e7) return String(d);
  const [mant, exp] = d.toExponential().split("e");
  return `${mant.includes(".") ? mant : `${mant}.0`}E${exp.startsWith("+") ? exp.slice(1) : exp}`;
}

/** String form of a number as Java would print its box (integral values print as integers). */
export function numberToString(n: number): string {
  if (Number.isInteger(n)) {
    return Math.abs(n) < 1e21 ? String(n === 0 ? 0 : n) : BigInt(n).toString();
  }
  return doubleToString(n);
}

/** Java's Objects.toString for JSON values: lists "[a, b]", maps "{k=v}", null "null". */
export function javaToString(v: unknown): string {
  if (typeof v === "string") return v;
  if (typeof v === "number") return numberToString(v);
  if (v === null || v === undefined) return "null";
  if (typeof v === "boolean") return v ? "true" : "false";
  if (Array.isArray(v)) return `[${v.map(javaToString).join(", ")}]`;
  if (isMap(v)) {
    const parts: string[] = [];
    for (const k of Object.keys(v)) parts.push(`${k}=${javaToString((v as JsonMap)[k])}`);
    return `{${parts.join(", ")}}`;
  }
  return String(v);
}
