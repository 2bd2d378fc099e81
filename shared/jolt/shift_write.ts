/**
 * Shift's output writer (JOLT's ShiftrWriter + ShiftrTraversr): walks an output path, creating
 * maps and arrays as needed, and never overwrites: a second value at the same place turns it
 * into an array (`[first, second]`), and further values are appended.
 */

import { ABSENT, isContainer, isMap, type JsonMap, type Ownership, setKey } from "./json.ts";
import { APPEND, DotPath } from "./paths.ts";
import type { Levels, WalkedPath } from "./walked_path.ts";

/** A compiled output path of a shift leaf. */
export class ShiftWriter {
  readonly #path: DotPath;

  constructor(rhs: string, levels: Levels) {
    this.#path = DotPath.parse(rhs, true);
    this.#path.validate(levels);
  }

  /** Writes `data` under `holder` (whose "root" key is the output document). */
  write(holder: JsonMap, data: unknown, wp: WalkedPath, own: Ownership): void {
    const path = this.#path;
    const keys = path.keysFor(wp);
    if (keys === null) return;
    const last = path.length - 1;
    let tree: unknown = holder;
    for (let i = 0; i <= last; i++) {
      const step = path.stepAt(i);
      const key = keys[i];
      if (step === 0 ? !isMap(tree) : !Array.isArray(tree)) return; // type clash: drop silently
      if (i === last) {
        finalSet(tree as JsonMap | unknown[], step, key, data, own);
        return;
      }
      const next = path.stepAt(i + 1);
      let sub = get(tree as JsonMap | unknown[], step, key);
      if (sub === null || sub === undefined) {
        sub = own.own(next === 0 ? {} : []);
        put(tree as JsonMap | unknown[], step, key, sub);
      } else if (isContainer(sub) && (next === 0 ? isMap(sub) : Array.isArray(sub))) {
        // Writing into data copied from the input: copy it first (copy-on-write).
        if (!own.owns(sub)) {
          sub = own.writable(sub);
          put(tree as JsonMap | unknown[], step, key, sub);
        }
      }
      tree = sub;
    }
  }
}

function get(tree: JsonMap | unknown[], step: 0 | 1 | 2, key: string | number): unknown {
  if (step === 0) return Object.hasOwn(tree, key) ? (tree as JsonMap)[key as string] : null;
  if (step === 2) return null;
  const list = tree as unknown[];
  return (key as number) < list.length ? list[key as number] : null;
}

function put(tree: JsonMap | unknown[], step: 0 | 1 | 2, key: string | number, v: unknown): void {
  if (step === 0) {
    setKey(tree as JsonMap, key as string, v);
  } else if (step === 2 || key === APPEND) {
    (tree as unknown[]).push(v);
  } else {
    const list = tree as unknown[];
    const idx = key as number;
    while (list.length < idx) list.push(null);
    list[idx] = v;
  }
}

function finalSet(
  tree: JsonMap | unknown[],
  step: 0 | 1 | 2,
  key: string | number,
  data: unknown,
  own: Ownership,
): void {
  let existing: unknown = ABSENT;
  if (step === 0) {
    if (Object.hasOwn(tree, key)) existing = (tree as JsonMap)[key as string];
  } else if (step === 1 && (key as number) < (tree as unknown[]).length) {
    existing = (tree as unknown[])[key as number];
  }
  if (existing === ABSENT || existing === null || existing === undefined) {
    put(tree, step, key, data);
  } else if (Array.isArray(existing)) {
    let list = existing;
    if (!own.owns(list)) {
      list = own.writable(list);
      put(tree, step, key, list);
    }
    list.push(data);
  } else {
    put(tree, step, key, own.own([existing, data]));
  }
}
