/**
 * Shift's output writer (JOLT's ShiftrWriter + ShiftrTraversr): walks an output path, creating
 * maps and arrays as needed, and never overwrites: a second value at the same place turns it
 * into an array (`[first, second]`), and further values are appended.
 */

import { chargeSteps, checkIndex, MAX_ARRAY_INDEX, padTo, startOutput } from "./limits.ts";
import { getOwn, isMap, type JsonMap, type Ownership, setKey, shallowCopy } from "../json.ts";
import { DotPath } from "./paths.ts";
import type { Levels, WalkedPath } from "./walked_path.ts";

type Container = JsonMap | unknown[];

/**
 * The document a shift is building. Containers the writer creates are its own; values copied
 * from the input are not, and are copied before anything is written into them.
 *
 * With an Ownership (when a later chain operation edits in place), every container made here is
 * registered there. Without one, only the foreign containers are tracked, which is cheaper.
 */
export class ShiftOutput {
  /** Holds the document under the key "root" (JOLT writes every path below "root"). */
  readonly holder: JsonMap = {};
  readonly #own: Ownership | null;
  #foreign: Set<object> | null = null;

  constructor(own: Ownership | null) {
    this.#own = own;
  }

  /** A new container of ours. */
  create(wantMap: boolean): Container {
    const c = wantMap ? {} : [];
    return this.#own ? this.#own.own(c) : c;
  }

  /** Records a value written as data (it stays foreign). */
  wrote(data: unknown): void {
    if (this.#own === null && data !== null && typeof data === "object") {
      (this.#foreign ??= new Set()).add(data);
    }
  }

  /** `c` if we may write into it, else a copy of it we may write into. */
  writable(c: Container): Container {
    if (this.#own) return this.#own.writable(c);
    const foreign = this.#foreign;
    if (foreign === null || !foreign.has(c)) return c;
    const copy = shallowCopy(c);
    // What the copy holds is still shared with the input.
    for (const v of Array.isArray(copy) ? copy : Object.values(copy)) {
      if (v !== null && typeof v === "object") foreign.add(v);
    }
    return copy;
  }
}

/** A compiled output path of a shift leaf. */
export class ShiftWriter {
  readonly #path: DotPath;

  constructor(rhs: string, levels: Levels) {
    this.#path = DotPath.parse(rhs, true);
    this.#path.validate(levels);
  }

  /** The output path (for the shift compiler). */
  get path(): DotPath {
    return this.#path;
  }

  /** Writes `data` at this path (evaluated against `wp`) into `out`. */
  write(out: ShiftOutput, data: unknown, wp: WalkedPath): void {
    // A step per level of the path; the fast path's writer functions charge the same.
    chargeSteps(this.#path.steps.length);
    const keys = this.#path.keysFor(wp);
    if (keys === null) return;
    const steps = this.#path.steps;
    const last = steps.length - 1;
    let tree: Container = out.holder;
    for (let i = 0; i < last; i++) {
      const step = steps[i];
      const key = keys[i];
      let sub: unknown;
      // Step 0 is always the holder's "root": a plain property read keeps that site monomorphic.
      if (i === 0) sub = out.holder.root;
      else if (step === 0) sub = getOwn(tree as JsonMap, key as string);
      else if (step === 1) sub = (tree as unknown[])[key as number];
      const wantMap = steps[i + 1] === 0;
      if (sub === null || sub === undefined) {
        sub = out.create(wantMap);
        put(tree, step, key, sub);
      } else if (typeof sub !== "object" || Array.isArray(sub) === wantMap) {
        return; // type clash with what is already there: JOLT drops the write silently
      } else {
        const w = out.writable(sub as Container);
        if (w !== sub) put(tree, step, key, w);
        sub = w;
      }
      tree = sub as Container;
    }
    finalSet(out, tree, steps[last], keys[last], data);
  }
}

function put(tree: Container, step: number, key: string | number, v: unknown): void {
  if (step === 0) {
    setKey(tree as JsonMap, key as string, v);
  } else if (step === 2) {
    (tree as unknown[]).push(v);
  } else {
    putIndex(tree as unknown[], key as number, v);
  }
}

/**
 * The largest array index a shift writes at. An index can come from the data (`[&1]` over a key
 * such as "02000000000", `[@(1,i)]`), and the nulls before it are real: without a bound a ten-byte
 * body could make the transform fill gigabytes (limits.ts also bounds the run's total padding).
 */
export const MAX_SHIFT_INDEX = MAX_ARRAY_INDEX;

/** Starts a shift's output budget (the chain's run starts it and the step budget). */
export function startShiftRun(): void {
  startOutput();
}

/** Writes at an array index, padding with nulls (what JOLT does), within the run's limits. */
export function putIndex(list: unknown[], index: number, value: unknown): void {
  checkIndex(index, "shift output");
  padTo(list, index, "shift output");
  list[index] = value;
}

function finalSet(
  out: ShiftOutput,
  tree: Container,
  step: number,
  key: string | number,
  data: unknown,
) {
  let existing: unknown;
  if (step === 0) {
    if (!isMap(tree)) return;
    existing = getOwn(tree, key as string);
  } else {
    if (!Array.isArray(tree)) return;
    if (step === 1) existing = tree[key as number];
  }
  out.wrote(data);
  if (existing === null || existing === undefined) {
    put(tree, step, key, data);
  } else if (Array.isArray(existing)) {
    const list = out.writable(existing) as unknown[];
    if (list !== existing) put(tree, step, key, list);
    list.push(data);
  } else {
    const pair = out.create(false) as unknown[];
    pair.push(existing, data);
    put(tree, step, key, pair);
  }
}
