/**
 * The functions of the modify operations (`"key": "=name(args…)"`), with JOLT's argument
 * conventions: a function gets its evaluated arguments and returns a value or ABSENT ("no
 * value", so nothing is written). A single list argument is spread for the list-style functions.
 *
 * Unlike JOLT, functions never change their arguments in place (JOLT's squashNulls edits the
 * list it was given); they return new values instead.
 */

import { ABSENT, isMap, jsonEquals, type JsonMap, setKey } from "../json.ts";
import { chargeSteps } from "./limits.ts";
import {
  isJavaDouble,
  isJavaInt,
  isJavaLong,
  javaSplitRegex,
  javaToString,
  javaTrim,
  numKind,
} from "./java.ts";
import {
  argDrivenList,
  argDrivenSingle,
  base,
  isString,
  type JoltFunction,
  listFn,
  type R,
  singleFn,
  squashFn,
} from "./function_conventions.ts";
import {
  abs,
  avg,
  divide,
  doubleSum,
  extremum,
  intSum,
  longSum,
  roundHalfUp,
  subtract,
  toDouble,
  toInteger,
  toLong,
} from "./functions_math.ts";

export type { JoltFunction };

// ---------------------------------------------------------------------------------------------
// Objects (JOLT's Objects)

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
  chargeSteps(1);
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
  for (const x of a) {
    chargeSteps(out.length); // quadratic: each element against those kept
    if (!out.some((y) => jsonEquals(x, y))) out.push(x);
  }
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
