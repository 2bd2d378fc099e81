/**
 * The functions of the modify operations (`"key": "=name(args…)"`), with JOLT's argument
 * conventions: a function gets its evaluated arguments and returns a value or ABSENT ("no
 * value", so nothing is written). A single list argument is spread for the list-style functions.
 *
 * Unlike JOLT, functions never change their arguments in place (JOLT's squashNulls edits the
 * list it was given); they return new values instead.
 */

import { ABSENT, type Absent, isMap, jsonEquals, type JsonMap, setKey } from "./json.ts";
import {
  intValue,
  isJavaDouble,
  isJavaInt,
  isJavaLong,
  javaSplitRegex,
  javaToString,
  javaTrim,
  type KindedNumber,
  longValue,
  numKind,
  toKindedNumber,
} from "./java.ts";

/** A modify function: evaluated arguments in, a value or ABSENT out. */
export type JoltFunction = (args: readonly unknown[]) => unknown | Absent;

type R = unknown | Absent;

// ---------------------------------------------------------------------------------------------
// Argument conventions (JOLT's Function.BaseFunction, SingleFunction, ListFunction, …)

/** One list argument is the list; one other non-null argument is a single; several are a list. */
function base(single: (a: unknown) => R, list: (l: readonly unknown[]) => R): JoltFunction {
  return (args) => {
    if (args.length === 0) return ABSENT;
    if (args.length === 1) {
      const a = args[0];
      if (Array.isArray(a)) return a.length === 0 ? ABSENT : list(a);
      if (a === null || a === undefined) return ABSENT;
      return single(a);
    }
    return list(args);
  };
}

/** Applies `single` to one value, or to each element (keeping those it cannot convert). */
function singleFn(single: (a: unknown) => R): JoltFunction {
  return base(single, (l) =>
    l.map((o) => {
      const r = single(o);
      return r === ABSENT ? o : r;
    }));
}

/** Works on a list of values only. */
function listFn(list: (l: readonly unknown[]) => R): JoltFunction {
  return base(() => ABSENT, list);
}

/** First argument is special (a separator, an index…), the rest is the data. */
function argDriven<S>(
  isSpecial: (v: unknown) => v is S,
  single: (s: S, a: unknown) => R,
  list: (s: S, l: readonly unknown[]) => R,
): JoltFunction {
  return (args) => {
    if (args.length === 1 && Array.isArray(args[0])) args = args[0];
    if (args.length < 2 || !isSpecial(args[0])) return ABSENT;
    const special = args[0];
    if (args.length === 2) {
      return Array.isArray(args[1]) ? list(special, args[1]) : single(special, args[1]);
    }
    return list(special, args.slice(1));
  };
}

function argDrivenSingle<S>(isSpecial: (v: unknown) => v is S, single: (s: S, a: unknown) => R) {
  return argDriven(isSpecial, single, (s, l) =>
    l.map((o) => {
      const r = single(s, o);
      return r === ABSENT ? o : r;
    }));
}

function argDrivenList<S>(
  isSpecial: (v: unknown) => v is S,
  list: (s: S, l: readonly unknown[]) => R,
) {
  return argDriven(isSpecial, () => ABSENT, list);
}

/** For the squash functions: a single list/map argument, or all arguments as a list. */
function squashFn(single: (a: unknown) => R): JoltFunction {
  return (args) => {
    if (args.length === 0) return ABSENT;
    if (args.length === 1) {
      const a = args[0];
      if (Array.isArray(a) && a.length === 0) return ABSENT;
      if (a === null || a === undefined) return ABSENT;
      return single(a);
    }
    return single([...args]);
  };
}

const isString = (v: unknown): v is string => typeof v === "string";

// ---------------------------------------------------------------------------------------------
// Conversions (JOLT's Objects)

function toInteger(a: unknown): R {
  if (typeof a === "number") return intValue(a);
  if (typeof a !== "string") return ABSENT;
  const n = toKindedNumber(a);
  return n === null ? ABSENT : kindedInt(n);
}

function kindedInt(n: KindedNumber): number {
  return intValue(n.value, n.kind);
}

function toLong(a: unknown): R {
  if (typeof a === "number") return longValue(a);
  if (typeof a !== "string") return ABSENT;
  const n = toKindedNumber(a);
  return n === null ? ABSENT : longValue(n.value);
}

function toDouble(a: unknown): R {
  if (typeof a === "number") return a;
  if (typeof a !== "string") return ABSENT;
  const n = toKindedNumber(a);
  return n === null ? ABSENT : n.value;
}

function toBoolean(a: unknown): R {
  if (typeof a === "boolean") return a;
  if (typeof a === "string") {
    const l = a.toLowerCase();
    if (l === "true") return true;
    if (l === "false") return false;
  }
  return ABSENT;
}

function squashNulls(a: unknown): unknown {
  if (Array.isArray(a)) return a.filter((x) => x !== null && x !== undefined);
  if (isMap(a)) {
    const out: JsonMap = {};
    for (const k of Object.keys(a)) if (a[k] !== null && a[k] !== undefined) setKey(out, k, a[k]);
    return out;
  }
  return a;
}

function recursivelySquashNulls(a: unknown): unknown {
  const squashed = squashNulls(a);
  if (Array.isArray(squashed)) return squashed.map(recursivelySquashNulls);
  if (isMap(squashed)) {
    for (const k of Object.keys(squashed)) setKey(squashed, k, recursivelySquashNulls(squashed[k]));
  }
  return squashed;
}

function squashDuplicates(a: unknown): unknown {
  if (!Array.isArray(a)) return a;
  const out: unknown[] = [];
  for (const x of a) if (!out.some((y) => jsonEquals(x, y))) out.push(x);
  return out;
}

function size(args: readonly unknown[]): R {
  if (args.length === 0) return ABSENT;
  if (args.length > 1) return args.length;
  const a = args[0];
  if (Array.isArray(a)) return a.length;
  if (typeof a === "string") return a.length;
  if (isMap(a)) return Object.keys(a).length;
  return ABSENT;
}

// ---------------------------------------------------------------------------------------------
// Math (JOLT's Math)

const INT_MIN = -2147483648;
const INT_MAX = 2147483647;
const LONG_MIN = -9223372036854775808;
const LONG_MAX = 9223372036854775807;
const DOUBLE_MAX = Number.MAX_VALUE;

/** A number argument with its box, or null (strings are parsed, like JOLT's toNumber). */
function kinded(arg: unknown): KindedNumber | null {
  if (typeof arg === "number") return { value: arg, kind: numKind(arg) };
  if (typeof arg === "string") return toKindedNumber(arg);
  return null;
}

// JOLT keeps the best Integer, Long and Double separately, then compares them via longValue();
// the result keeps the winner's box (so max(2, 2.5) is 2, exactly as in JOLT).
function extremum(list: readonly unknown[], wantMax: boolean): R {
  let int = wantMax ? INT_MIN : INT_MAX;
  let dbl = wantMax ? -DOUBLE_MAX : DOUBLE_MAX;
  let lng = wantMax ? LONG_MIN : LONG_MAX;
  let found = false;
  const pick = wantMax ? Math.max : Math.min;
  for (const arg of list) {
    const n = kinded(arg);
    if (n === null) continue;
    found = true;
    if (n.kind === "int") int = pick(int, n.value);
    else if (n.kind === "double") dbl = pick(dbl, n.value);
    else lng = pick(lng, n.value);
  }
  if (!found) return ABSENT;
  const dl = longValue(dbl);
  if (wantMax) {
    if (int >= dl && int >= lng) return int;
    return lng >= dl ? lng : dbl;
  }
  if (int <= dl && int <= lng) return int;
  return lng <= dl ? lng : dbl;
}

function abs(a: unknown): R {
  if (typeof a === "number") {
    if (a === INT_MIN) return INT_MIN; // Math.abs(Integer.MIN_VALUE) overflows in Java
    return Math.abs(a);
  }
  if (typeof a === "string") {
    const n = toKindedNumber(a);
    return n === null ? ABSENT : abs(n.value);
  }
  return ABSENT;
}

function avg(list: readonly unknown[]): R {
  let sum = 0;
  let count = 0;
  for (const a of list) {
    const n = kinded(a);
    if (n !== null) {
      sum += n.value;
      count++;
    }
  }
  return count === 0 ? ABSENT : sum / count;
}

function intSum(list: readonly unknown[]): R {
  let sum = 0;
  for (const a of list) {
    const n = toInteger(a);
    if (n !== ABSENT) sum = (sum + (n as number)) | 0; // int arithmetic wraps
  }
  return sum;
}

function doubleSum(list: readonly unknown[]): R {
  let sum = 0;
  for (const a of list) {
    const n = toDouble(a);
    if (n !== ABSENT) sum += n as number;
  }
  return sum;
}

function longSum(list: readonly unknown[]): R {
  let sum = 0;
  for (const a of list) {
    const n = toLong(a);
    if (n !== ABSENT) sum += n as number;
  }
  return sum;
}

function subtract(test: (v: unknown) => v is number, wrap: boolean) {
  return (list: readonly unknown[]): R => {
    if (list.length !== 2 || !test(list[0]) || !test(list[1])) return ABSENT;
    const d = (list[0] as number) - (list[1] as number);
    return wrap ? d | 0 : d;
  };
}

function divide(list: readonly unknown[]): R {
  if (list.length !== 2) return ABSENT;
  const num = kinded(list[0]);
  const den = kinded(list[1]);
  if (num === null || den === null || den.value === 0) return ABSENT;
  return num.value / den.value;
}

/** BigDecimal(double).setScale(digits, HALF_UP).doubleValue(). */
function roundHalfUp(x: number, digits: number): number {
  if (!Number.isFinite(x)) return x;
  if (digits > 100) return x;
  if (digits >= 0) return Number(x.toFixed(digits)); // toFixed rounds the exact value, ties away from 0
  const f = 10 ** -digits;
  return Number((x / f).toFixed(0)) * f;
}

// ---------------------------------------------------------------------------------------------
// Strings (JOLT's Strings)

function substring(list: readonly unknown[]): R {
  if (list.length !== 3) return ABSENT;
  const [s, start, end] = list;
  if (typeof s !== "string" || !isJavaInt(start) || !isJavaInt(end)) return ABSENT;
  if (start >= end || start < 0 || end < 1 || end > s.length) return ABSENT;
  return s.slice(start, end);
}

function join(sep: string, list: readonly unknown[]): R {
  let out = "";
  for (let i = 0; i < list.length; i++) {
    const a = list[i];
    if (a === null || a === undefined) continue;
    const s = javaToString(a);
    if (s === "") continue;
    out += s;
    // JOLT adds the separator after every non-empty element but the last position.
    if (i < list.length - 1) out += sep;
  }
  return out;
}

function pad(left: boolean) {
  return (source: string, args: readonly unknown[]): R => {
    if (args.length < 2) return ABSENT;
    const [width, filler] = args;
    if (!isJavaInt(width) || typeof filler !== "string") return ABSENT;
    if (width <= 0 || width > 500 || filler.length !== 1) return ABSENT;
    if (width <= source.length) return source;
    const padding = filler.repeat(width - source.length);
    return left ? padding + source : source + padding;
  };
}

// ---------------------------------------------------------------------------------------------
// Lists (JOLT's Lists)

function sortList(list: readonly unknown[]): R {
  const out = list.slice();
  if (out.length < 2) return out;
  const first = out[0];
  const type = typeof first;
  if (type !== "string" && type !== "number" && type !== "boolean") return ABSENT;
  // Java's Arrays.sort needs mutually comparable elements: one box type, no nulls.
  const kind = type === "number" ? numKind(first as number) : null;
  for (const x of out) {
    const t: string = typeof x;
    if (t !== type) return ABSENT;
    if (kind !== null && numKind(x as number) !== kind) return ABSENT;
  }
  if (type === "string") out.sort((a, b) => ((a as string) < (b as string) ? -1 : a === b ? 0 : 1));
  else out.sort((a, b) => Number(a) - Number(b));
  return out;
}

function elementAt(index: number, list: readonly unknown[]): R {
  return index >= 0 && list.length > index ? list[index] : ABSENT;
}

// ---------------------------------------------------------------------------------------------
// Extensions (not in Bazaarvoice JOLT 0.1.8): type tests and indexOf

/** Returns the first argument if `test` accepts it (JOLT's notNull style), else no value. */
function typeTest(test: (v: unknown) => boolean): JoltFunction {
  return (args) => (args.length > 0 && test(args[0]) ? args[0] : ABSENT);
}

function indexOf(args: readonly unknown[]): R {
  if (args.length !== 2) return ABSENT;
  const [source, item] = args;
  if (typeof source === "string") return typeof item === "string" ? source.indexOf(item) : ABSENT;
  if (Array.isArray(source)) return source.findIndex((x) => jsonEquals(x, item));
  return ABSENT;
}

// ---------------------------------------------------------------------------------------------

const REGISTRY: Record<string, JoltFunction> = {
  toLower: singleFn((a) => (typeof a === "string" ? a.toLowerCase() : ABSENT)),
  toUpper: singleFn((a) => (typeof a === "string" ? a.toUpperCase() : ABSENT)),
  concat: listFn((l) => l.filter((a) => a !== null && a !== undefined).map(javaToString).join("")),
  join: argDrivenList(isString, join),
  split: argDrivenSingle(isString, (sep, src) => {
    if (typeof src !== "string") return ABSENT;
    return javaSplitRegex(src, sep) ?? ABSENT;
  }),
  substring: listFn(substring),
  trim: singleFn((a) => (typeof a === "string" ? javaTrim(a) : ABSENT)),
  leftPad: argDrivenList(isString, pad(true)),
  rightPad: argDrivenList(isString, pad(false)),
  min: base((a) => (typeof a === "number" ? a : ABSENT), (l) => extremum(l, false)),
  max: base((a) => (typeof a === "number" ? a : ABSENT), (l) => extremum(l, true)),
  abs: singleFn(abs),
  avg: listFn(avg),
  intSum: listFn(intSum),
  doubleSum: listFn(doubleSum),
  longSum: listFn(longSum),
  intSubtract: listFn(subtract(isJavaInt, true)),
  // JSON 10.0 parses to 10, so "is a Double" cannot be told apart here: any number is accepted.
  doubleSubtract: listFn(subtract((v): v is number => typeof v === "number", false)),
  longSubtract: listFn(subtract(isJavaLong, false)),
  divide: listFn(divide),
  divideAndRound: argDrivenList(isJavaInt, (digits, l) => {
    const q = divide(l);
    return q === ABSENT ? ABSENT : roundHalfUp(q as number, digits);
  }),
  toInteger: singleFn(toInteger),
  toDouble: singleFn(toDouble),
  toLong: singleFn(toLong),
  toBoolean: singleFn(toBoolean),
  toString: singleFn((a) => javaToString(a)),
  size,
  squashNulls: squashFn(squashNulls),
  recursivelySquashNulls: squashFn(recursivelySquashNulls),
  squashDuplicates: squashFn(squashDuplicates),
  noop: () => ABSENT,
  isPresent: (args) => (args.length === 0 ? ABSENT : args[0]),
  notNull: (args) => (args.length === 0 || args[0] === null ? ABSENT : args[0]),
  isNull: (args) => (args.length === 0 || args[0] !== null ? ABSENT : args[0]),
  firstElement: listFn((l) => (l.length > 0 ? l[0] : ABSENT)),
  lastElement: listFn((l) => (l.length > 0 ? l[l.length - 1] : ABSENT)),
  elementAt: argDrivenList(isJavaInt, elementAt),
  toList: base((a) => [a], (l) => l),
  sort: base((a) => a, sortList),
  // Extensions:
  indexOf,
  isString: typeTest((v) => typeof v === "string"),
  isInteger: typeTest(isJavaInt),
  isLong: typeTest(isJavaLong),
  isDouble: typeTest(isJavaDouble),
  isBoolean: typeTest((v) => typeof v === "boolean"),
  isList: typeTest(Array.isArray),
  isMap: typeTest(isMap),
};

/** Names of the functions JOLT 0.1.8 ships. */
export const JOLT_FUNCTIONS: readonly string[] = Object.freeze([
  "toLower",
  "toUpper",
  "concat",
  "join",
  "split",
  "substring",
  "trim",
  "leftPad",
  "rightPad",
  "min",
  "max",
  "abs",
  "avg",
  "intSum",
  "doubleSum",
  "longSum",
  "intSubtract",
  "doubleSubtract",
  "longSubtract",
  "divide",
  "divideAndRound",
  "toInteger",
  "toDouble",
  "toLong",
  "toBoolean",
  "toString",
  "size",
  "squashNulls",
  "recursivelySquashNulls",
  "squashDuplicates",
  "noop",
  "isPresent",
  "notNull",
  "isNull",
  "firstElement",
  "lastElement",
  "elementAt",
  "toList",
  "sort",
]);

/** Every function name a modify spec may use (JOLT's set plus our documented extensions). */
export const FUNCTIONS: readonly string[] = Object.freeze(Object.keys(REGISTRY));

/** The function called `name`, or undefined. */
export function lookupFunction(name: string): JoltFunction | undefined {
  return Object.hasOwn(REGISTRY, name) ? REGISTRY[name] : undefined;
}
