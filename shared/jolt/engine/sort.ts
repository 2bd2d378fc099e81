/**
 * `sort` (JOLT's Sortr): a copy of the input with every object's keys in order: keys starting
 * with `~` first, then plain UTF-16 order (Java's String.compareTo). Arrays keep their order.
 *
 * Caveat of JavaScript objects: keys that look like array indexes ("0", "42") are always
 * enumerated first, in numeric order, whatever order they were inserted in.
 */

import { isMap, type JsonMap, type Ownership, setKey } from "../json.ts";
import { chargeSteps } from "./limits.ts";

/** JOLT's key order: "~" keys first, then String.compareTo. */
export function compareSortKeys(a: string, b: string): number {
  const at = a.length > 0 && a.charCodeAt(0) === 126;
  const bt = b.length > 0 && b.charCodeAt(0) === 126;
  if (at !== bt) return at ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The sort operation (it has no spec). */
export class SortOp {
  /** Returns a sorted deep copy of the input. */
  apply(input: unknown, own: Ownership): unknown {
    return sortJson(input, own);
  }
}

function sortJson(v: unknown, own: Ownership): unknown {
  chargeSteps(1);
  if (Array.isArray(v)) {
    const out = own.own(new Array(v.length));
    for (let i = 0; i < v.length; i++) out[i] = sortJson(v[i], own);
    return out;
  }
  if (isMap(v)) {
    const out = own.own({} as JsonMap);
    const keys = Object.keys(v);
    chargeSteps(keys.length); // the key sort
    for (const k of keys.sort(compareSortKeys)) setKey(out, k, sortJson(v[k], own));
    return out;
  }
  return v;
}
