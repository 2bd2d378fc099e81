/** Numeric conversions and math functions (JOLT's Objects.toInteger… and Math). */

import { ABSENT } from "../json.ts";
import { intValue, type KindedNumber, longValue, numKind, toKindedNumber } from "./java.ts";
import type { R } from "./function_conventions.ts";

/** Integer.intValue of a number or numeric string. */
export function toInteger(a: unknown): R {
  if (typeof a === "number") return intValue(a);
  if (typeof a !== "string") return ABSENT;
  const n = toKindedNumber(a);
  return n === null ? ABSENT : kindedInt(n);
}

function kindedInt(n: KindedNumber): number {
  return intValue(n.value, n.kind);
}

/** Long.longValue of a number or numeric string. */
export function toLong(a: unknown): R {
  if (typeof a === "number") return longValue(a);
  if (typeof a !== "string") return ABSENT;
  const n = toKindedNumber(a);
  return n === null ? ABSENT : longValue(n.value);
}

/** Double value of a number or numeric string. */
export function toDouble(a: unknown): R {
  if (typeof a === "number") return a;
  if (typeof a !== "string") return ABSENT;
  const n = toKindedNumber(a);
  return n === null ? ABSENT : n.value;
}

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
/** min (wantMax false) or max over numbers and numeric strings, JOLT-style. */
export function extremum(list: readonly unknown[], wantMax: boolean): R {
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

/** Absolute value of a number or numeric string. */
export function abs(a: unknown): R {
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

/** Average of the numbers (numeric strings count), as a double. */
export function avg(list: readonly unknown[]): R {
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

/** Sum as Java ints (wrapping). */
export function intSum(list: readonly unknown[]): R {
  let sum = 0;
  for (const a of list) {
    const n = toInteger(a);
    if (n !== ABSENT) sum = (sum + (n as number)) | 0; // int arithmetic wraps
  }
  return sum;
}

/** Sum as doubles. */
export function doubleSum(list: readonly unknown[]): R {
  let sum = 0;
  for (const a of list) {
    const n = toDouble(a);
    if (n !== ABSENT) sum += n as number;
  }
  return sum;
}

/** Sum as longs. */
export function longSum(list: readonly unknown[]): R {
  let sum = 0;
  for (const a of list) {
    const n = toLong(a);
    if (n !== ABSENT) sum += n as number;
  }
  return sum;
}

/** Two-argument subtraction for arguments accepted by `test`. */
export function subtract(test: (v: unknown) => v is number, wrap: boolean) {
  return (list: readonly unknown[]): R => {
    if (list.length !== 2 || !test(list[0]) || !test(list[1])) return ABSENT;
    const d = (list[0] as number) - (list[1] as number);
    return wrap ? d | 0 : d;
  };
}

/** Double division of two numbers; no value for a zero divisor. */
export function divide(list: readonly unknown[]): R {
  if (list.length !== 2) return ABSENT;
  const num = kinded(list[0]);
  const den = kinded(list[1]);
  if (num === null || den === null || den.value === 0) return ABSENT;
  return num.value / den.value;
}

/** BigDecimal(double).setScale(digits, HALF_UP).doubleValue(). */
export function roundHalfUp(x: number, digits: number): number {
  if (!Number.isFinite(x)) return x;
  if (digits > 100) return x;
  if (digits >= 0) return Number(x.toFixed(digits)); // toFixed rounds the exact value, ties away from 0
  const f = 10 ** -digits;
  return Number((x / f).toFixed(0)) * f;
}
