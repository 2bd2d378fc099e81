/**
 * Reading a path over the JSON tape (raw_json.ts): what DotPath.read does on parsed values, on tape
 * positions. Depends on the tape alone, so the path elements and the shift code can both use it.
 */
import { keyHash, Kind, type RawDoc } from "./raw_json.ts";

/** A null with no tape record (an absent parent seen through `@`). */
export const NULL_VALUE = -1;
/** Nothing at all. */
export const ABSENT_REF = -2;

/**
 * DotPath.read over the tape from position `cur`, with the path's keys already evaluated (a
 * negative index stands for one that did not resolve): a position, or ABSENT_REF.
 */
export function readTape(
  doc: RawDoc,
  cur: number,
  steps: ArrayLike<number>,
  keys: readonly (string | number)[],
): number {
  const last = steps.length - 1;
  for (let i = 0; i <= last; i++) if (steps[i] !== 0 && (keys[i] as number) < 0) return ABSENT_REF;
  for (let i = 0; i <= last; i++) {
    if (cur < 0) return ABSENT_REF;
    const kind = doc.kind(cur);
    if (kind === Kind.Null) return ABSENT_REF;
    if (steps[i] === 0) {
      if (kind !== Kind.Object) return ABSENT_REF;
      const key = keys[i] as string;
      const m = doc.member(cur, key, keyHash(key));
      if (i === last) return m >= 0 ? m : ABSENT_REF;
      cur = m >= 0 ? m : NULL_VALUE;
    } else {
      if (kind !== Kind.Array) return ABSENT_REF;
      const idx = keys[i] as number;
      if (idx >= doc.count(cur)) return i === last ? ABSENT_REF : NULL_VALUE;
      cur = doc.element(cur, idx);
    }
  }
  return cur;
}
