/**
 * References into the walked path: `&`, `&n`, `&(n,m)` (and the same forms with `$`), and `#n`.
 * Every sugar form is expanded to its canonical numbers when the spec is compiled.
 */

import { specFail } from "./errors.ts";
import { javaSplitLiteral, parseJavaInt } from "./java.ts";
import type { Levels } from "./walked_path.ts";

/** A reference into the walked path: how many levels up, which key part. */
export interface Ref {
  readonly up: number;
  readonly group: number;
}

/** Parses `&…` / `$…` references (all sugar forms) into their canonical numbers. */
export function parseGroupRef(ref: string, token: "&" | "$"): Ref {
  if (ref.length === 0 || ref[0] !== token) specFail(`invalid reference "${ref}"`);
  let up = 0;
  let group = 0;
  if (ref.length > 1) {
    const meat = ref.slice(1);
    if (meat.length >= 3 && meat.startsWith("(") && meat.endsWith(")")) {
      const nums = javaSplitLiteral(meat.slice(1, -1), ",");
      if (nums.length > 2) specFail(`invalid reference "${ref}"`);
      up = refNumber(nums[0], ref, token);
      if (nums.length === 2) group = refNumber(nums[1], ref, token);
    } else {
      up = refNumber(meat, ref, token);
    }
  }
  return { up, group };
}

/** Parses `#` / `#n` (only valid inside `[…]` on the RHS). */
export function parseHashRef(ref: string): number {
  if (ref.length === 0 || ref[0] !== "#") specFail(`invalid reference "${ref}"`);
  return ref.length > 1 ? refNumber(ref.slice(1), ref, "#") : 0;
}

function refNumber(text: string, ref: string, token: string): number {
  const n = parseJavaInt(text);
  if (n === null) specFail(`unable to parse '${token}' reference "${ref}"`);
  if (n < 0) specFail(`reference "${ref}" can not have a negative value`);
  return n;
}

/** Rejects a reference that the compile-time shape of the walked path can never satisfy. */
export function checkRef(r: Ref, levels: Levels, text: string): void {
  if (r.up >= levels.length) {
    specFail(`reference "${text}" goes ${r.up} levels up, but only ${levels.length - 1} exist`);
  }
  const groups = levels[levels.length - 1 - r.up];
  if (r.group >= groups) {
    specFail(`reference "${text}" asks for key part ${r.group}, but that level has ${groups - 1}`);
  }
}
