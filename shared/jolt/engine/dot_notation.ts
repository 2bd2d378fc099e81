/**
 * JOLT's dot-notation splitting, at the string level: `a.b[2].@(1,x.y)` becomes the pieces
 * `a`, `b`, `[2]`, `@(1,x.y)`. Escaped dots (`\\.`) stay inside a piece; `@(…)` groups are kept
 * whole even when they contain dots.
 */

import { specFail } from "./errors.ts";

/** Splits a dot path into its pieces (each is then parsed as a key). */
export function splitPath(text: string, ref: string): string[] {
  return splitDotNotation(fixLeadingBracketSugar(text), ref);
}

/** `data[2].x` → `data.[2].x` (so that splitting on '.' is enough). */
function fixLeadingBracketSugar(s: string): string {
  if (s.length === 0) return "";
  let out = s[0];
  let prev = s[0];
  for (let i = 1; i < s.length; i++) {
    const c = s[i];
    if (c === "[" && prev !== "\\" && prev !== "@" && prev !== ".") out += ".";
    out += c;
    prev = c;
  }
  return out;
}

/** JOLT's parseDotNotation: splits on unescaped '.', keeping `@(…)` groups whole. */
function splitDotNotation(s: string, ref: string): string[] {
  const out: string[] = [];
  const it = { s, i: 0 };
  let sb = "";
  let prevIsEscape = false;
  while (it.i < s.length) {
    const c = s[it.i++];
    const currIsEscape: boolean = c === "\\" && !prevIsEscape;
    if (prevIsEscape && c !== "." && c !== "\\") {
      sb += "\\" + c;
    } else if (c === "@") {
      sb += "@" + parseAtGroup(it, ref);
      const openArray = sb.includes("[") && !sb.includes("]");
      if (!openArray) {
        out.push(sb);
        sb = "";
      }
    } else if (c === ".") {
      if (prevIsEscape) {
        sb += ".";
      } else if (sb.length > 0) {
        out.push(sb);
        sb = "";
      }
    } else if (!currIsEscape) {
      sb += c;
    }
    prevIsEscape = currIsEscape;
  }
  if (sb.length > 0) out.push(sb);
  return out;
}

/** After an '@': takes `(…)` with balanced parens, or a bare name up to the next '.'. */
function parseAtGroup(it: { s: string; i: number }, ref: string): string {
  const s = it.s;
  if (it.i >= s.length) return "";
  let c = s[it.i++];
  let sb = c;
  const parens = c === "(";
  let depth = parens ? 1 : 0;
  if (c === ".") specFail(`invalid '@' path element in "${ref}"`);
  while (it.i < s.length) {
    c = s[it.i++];
    sb += c;
    if (parens) {
      if (c === "(") specFail(`too many open parens '(' in "${ref}"`);
      if (c === ")") depth--;
      if (depth === 0) return sb;
    } else if (c === ".") {
      return `(${sb.slice(0, -1)})`;
    }
  }
  if (parens && depth !== 0) specFail(`unbalanced '@(' in "${ref}"`);
  return sb;
}
