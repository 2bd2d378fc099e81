/**
 * `remove` (JOLT's Removr): walks the spec and deletes the matching input keys. A spec value of
 * `""` removes the key; an object descends into it. Keys may be literals, `*` patterns or `a|b`;
 * inside arrays, literal keys are indexes and `*` means every element.
 */

import { atPath, specFail } from "./errors.ts";
import { describe, has, isMap, type JsonMap, type Ownership, setKey } from "../json.ts";
import { javaTrim, parseJavaInt } from "./java.ts";
import { splitOr } from "./paths.ts";
import { type StarMatcher, starMatcher } from "./star.ts";
import { chargeSteps } from "./limits.ts";

/** One removal key: literal text or a star pattern (no escapes, as in JOLT's Removr). */
interface RemoveNode {
  readonly literal: string | null;
  /** Literal key as an array index, or -1. */
  readonly index: number;
  readonly star: StarMatcher | null;
  /** Children for an object value; null for a `""` leaf. */
  readonly children: readonly RemoveNode[] | null;
}

function buildNodes(spec: JsonMap, path: readonly string[]): RemoveNode[] {
  const nodes: RemoveNode[] = [];
  for (const rawKey of Object.keys(spec)) {
    const rhs = spec[rawKey];
    const childPath = [...path, rawKey];
    for (const key of splitOr(rawKey)) {
      nodes.push(atPath(childPath, () => {
        let children: RemoveNode[] | null = null;
        if (isMap(rhs)) {
          children = buildNodes(rhs, childPath);
        } else if (!(typeof rhs === "string" && javaTrim(rhs).length === 0)) {
          specFail(`invalid remove RHS: should be "" or an object`);
        }
        const isStar = key.includes("*");
        const n = isStar ? null : parseJavaInt(key);
        return {
          literal: isStar ? null : key,
          index: n !== null && n >= 0 ? n : -1,
          star: isStar ? starMatcher(key) : null,
          children,
        };
      }));
    }
  }
  return nodes;
}

/** A compiled remove spec. */
export class RemoveOp {
  readonly #children: readonly RemoveNode[];

  constructor(spec: unknown) {
    if (!isMap(spec)) specFail(`remove expects a spec object, got ${describe(spec)}`, []);
    this.#children = buildNodes(spec, []);
  }

  /** Returns the input minus the matched keys (containers are copied only where they change). */
  apply(input: unknown, own: Ownership): unknown {
    return processChildren(this.#children, input, own);
  }
}

/** Applies `children` to `sub`; returns `sub`, or a changed copy of it. */
function processChildren(children: readonly RemoveNode[], sub: unknown, own: Ownership): unknown {
  if (Array.isArray(sub)) return processList(children, sub, own);
  if (isMap(sub)) return processMap(children, sub, own);
  return sub;
}

function processMap(children: readonly RemoveNode[], input: JsonMap, own: Ownership): JsonMap {
  let map = input;
  const doomed = new Set<string>();
  // A literal child is one lookup; a pattern is tried against every key.
  for (const c of children) {
    chargeSteps(c.literal !== null ? 1 : 1 + Object.keys(map).length);
    if (c.children === null) {
      if (c.literal !== null) {
        if (has(map, c.literal)) doomed.add(c.literal);
      } else {
        for (const k of Object.keys(map)) if (c.star!.stringMatch(k)) doomed.add(k);
      }
      continue;
    }
    const keys = c.literal !== null
      ? (has(map, c.literal) ? [c.literal] : [])
      : Object.keys(map).filter((k) => c.star!.stringMatch(k));
    for (const k of keys) {
      const v = map[k];
      const nv = processChildren(c.children, v, own);
      if (nv !== v) {
        map = own.writable(map);
        setKey(map, k, nv);
      }
    }
  }
  if (doomed.size > 0) {
    map = own.writable(map);
    for (const k of doomed) delete map[k];
  }
  return map;
}

function processList(children: readonly RemoveNode[], input: unknown[], own: Ownership): unknown[] {
  let list = input;
  const doomed = new Set<number>();
  for (const c of children) {
    const allIndexes = c.star !== null && c.star.kind === "starAll";
    chargeSteps(allIndexes ? 1 + list.length : 1);
    if (c.children === null) {
      if (c.index >= 0 && c.index < list.length) doomed.add(c.index);
      else if (allIndexes) { for (let i = 0; i < list.length; i++) doomed.add(i); }
      continue;
    }
    // Only literal indexes and the lone '*' make sense against an array.
    const indexes: number[] = [];
    if (c.index >= 0 && c.index < list.length) indexes.push(c.index);
    else if (allIndexes) { for (let i = 0; i < list.length; i++) indexes.push(i); }
    for (const i of indexes) {
      const v = list[i];
      const nv = processChildren(c.children, v, own);
      if (nv !== v) {
        list = own.writable(list);
        list[i] = nv;
      }
    }
  }
  if (doomed.size > 0) {
    // Remove from the highest index down so earlier removals do not shift later ones.
    const sorted = [...doomed].sort((a, b) => b - a);
    list = own.writable(list);
    for (const i of sorted) list.splice(i, 1);
  }
  return list;
}
