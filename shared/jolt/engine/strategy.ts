/**
 * How a composite spec node visits its input (JOLT's ExecutionStrategy): literal children by
 * spec key, computed (wildcard / reference) children in precedence order, and which of the two
 * wins when both could match. Shared by shift and the modify operations.
 *
 * Work steps (limits.ts): each literal child probed counts one, each computed child tried
 * against a key one, and a key of a `conflict` walk or a scalar one more for its literal lookup.
 * The fast path's generated code (../fast/shift_program.ts) charges the same.
 */

import { ABSENT, type Absent, getOwn, has, isMap, type JsonMap } from "../json.ts";
import { javaToString, parseJavaInt } from "./java.ts";
import { chargeSteps } from "./limits.ts";
import { indexKey, type WalkedPath } from "./walked_path.ts";

/** A child spec node: applies itself to one input key; true if it "took" the key. */
export interface Child<S> {
  apply(key: string, input: unknown | Absent, wp: WalkedPath, state: S): boolean;
}

/** A literal child with its key pre-parsed as an array index (-1 if it is not one). */
export interface LiteralChild<S> {
  readonly key: string;
  readonly index: number;
  readonly child: Child<S>;
}

/** The children of a composite node, bucketed. */
export interface Children<S> {
  readonly literals: ReadonlyMap<string, Child<S>>;
  /** Literal children in spec order. */
  readonly literalList: readonly LiteralChild<S>[];
  /** Computed children, already sorted by precedence. */
  readonly computed: readonly Child<S>[];
}

/** The strategies JOLT picks between. */
export type Strategy =
  | "availableLiterals"
  | "allLiterals"
  | "computed"
  | "conflict"
  | "availableLiteralsWithComputed"
  | "allLiteralsWithComputed";

/** Pre-parses a literal key as an array index. */
export function literalChild<S>(key: string, child: Child<S>): LiteralChild<S> {
  const n = parseJavaInt(key);
  return { key, index: n !== null && n >= 0 ? n : -1, child };
}

/** Runs `strategy` over `input` (a map, a list, a scalar, or nothing). */
export function process<S>(
  node: Children<S>,
  strategy: Strategy,
  input: unknown | Absent,
  wp: WalkedPath,
  state: S,
): void {
  if (input === ABSENT || input === null || input === undefined) return;
  if (Array.isArray(input)) {
    processList(node, strategy, input, wp, state);
  } else if (isMap(input)) {
    processMap(node, strategy, input, wp, state);
  } else {
    processScalar(node, strategy, javaToString(input), wp, state);
  }
}

function processMap<S>(n: Children<S>, st: Strategy, map: JsonMap, wp: WalkedPath, s: S): void {
  switch (st) {
    case "availableLiterals":
      return availableLiteralsMap(n, map, wp, s);
    case "allLiterals":
      return allLiteralsMap(n, map, wp, s);
    case "computed":
      return computedMap(n, map, wp, s);
    case "availableLiteralsWithComputed":
      availableLiteralsMap(n, map, wp, s);
      return computedMap(n, map, wp, s);
    case "allLiteralsWithComputed":
      allLiteralsMap(n, map, wp, s);
      return computedMap(n, map, wp, s);
    case "conflict":
      for (const key of Object.keys(map)) {
        chargeSteps(1);
        const lit = n.literals.get(key);
        if (lit) lit.apply(key, map[key], wp, s);
        else applyComputed(n.computed, key, map[key], wp, s);
      }
  }
}

function availableLiteralsMap<S>(n: Children<S>, map: JsonMap, wp: WalkedPath, s: S): void {
  chargeSteps(n.literalList.length);
  for (const l of n.literalList) {
    const v = getOwn(map, l.key);
    if (v !== undefined) l.child.apply(l.key, v, wp, s);
  }
}

function allLiteralsMap<S>(n: Children<S>, map: JsonMap, wp: WalkedPath, s: S): void {
  chargeSteps(n.literalList.length);
  for (const l of n.literalList) {
    l.child.apply(l.key, has(map, l.key) ? map[l.key] : ABSENT, wp, s);
  }
}

function computedMap<S>(n: Children<S>, map: JsonMap, wp: WalkedPath, s: S): void {
  for (const key of Object.keys(map)) applyComputed(n.computed, key, map[key], wp, s);
}

// An element past the array's original size that is still null was padded in by an expansion:
// JOLT treats it as missing rather than as a null value.
function listItem(list: unknown[], i: number, origSize: number): unknown | Absent {
  const v = list[i];
  return v === null && origSize >= 0 && i >= origSize ? ABSENT : v;
}

function processList<S>(n: Children<S>, st: Strategy, list: unknown[], wp: WalkedPath, s: S): void {
  const origSize = wp.last().origSize;
  switch (st) {
    case "availableLiterals":
      return availableLiteralsList(n, list, origSize, wp, s);
    case "allLiterals":
      return allLiteralsList(n, list, origSize, wp, s);
    case "computed":
      return computedList(n, list, origSize, wp, s);
    case "availableLiteralsWithComputed":
      availableLiteralsList(n, list, origSize, wp, s);
      return computedList(n, list, origSize, wp, s);
    case "allLiteralsWithComputed":
      allLiteralsList(n, list, origSize, wp, s);
      return computedList(n, list, origSize, wp, s);
    case "conflict":
      for (let i = 0; i < list.length; i++) {
        chargeSteps(1);
        const key = indexKey(i);
        const item = listItem(list, i, origSize);
        const lit = n.literals.get(key);
        if (lit) lit.apply(key, item, wp, s);
        else applyComputed(n.computed, key, item, wp, s);
      }
  }
}

function availableLiteralsList<S>(
  n: Children<S>,
  list: unknown[],
  origSize: number,
  wp: WalkedPath,
  s: S,
): void {
  chargeSteps(n.literalList.length);
  for (const l of n.literalList) {
    if (l.index >= 0 && l.index < list.length) {
      l.child.apply(l.key, listItem(list, l.index, origSize), wp, s);
    }
  }
}

function allLiteralsList<S>(
  n: Children<S>,
  list: unknown[],
  origSize: number,
  wp: WalkedPath,
  s: S,
): void {
  chargeSteps(n.literalList.length);
  for (const l of n.literalList) {
    const item = l.index >= 0 && l.index < list.length ? listItem(list, l.index, origSize) : ABSENT;
    l.child.apply(l.key, item, wp, s);
  }
}

function computedList<S>(
  n: Children<S>,
  list: unknown[],
  origSize: number,
  wp: WalkedPath,
  s: S,
): void {
  for (let i = 0; i < list.length; i++) {
    applyComputed(n.computed, indexKey(i), listItem(list, i, origSize), wp, s);
  }
}

function processScalar<S>(n: Children<S>, st: Strategy, scalar: string, wp: WalkedPath, s: S) {
  // A scalar is matched as if it were a key with no value under it ("true": {"#on": "x"}).
  chargeSteps(1);
  if (st !== "computed") n.literals.get(scalar)?.apply(scalar, ABSENT, wp, s);
  if (
    st === "computed" || st === "availableLiteralsWithComputed" || st === "allLiteralsWithComputed"
  ) {
    applyComputed(n.computed, scalar, ABSENT, wp, s);
  } else if (st === "conflict" && !n.literals.has(scalar)) {
    applyComputed(n.computed, scalar, ABSENT, wp, s);
  }
}

function applyComputed<S>(
  computed: readonly Child<S>[],
  key: string,
  input: unknown | Absent,
  wp: WalkedPath,
  s: S,
): void {
  for (const c of computed) {
    chargeSteps(1);
    if (c.apply(key, input, wp, s)) return;
  }
}
