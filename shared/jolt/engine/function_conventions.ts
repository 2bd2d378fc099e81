/**
 * JOLT's argument conventions for modify functions (Function.BaseFunction, SingleFunction,
 * ListFunction, ArgDrivenFunction, SquashFunction): how the evaluated arguments reach the code.
 */

import { ABSENT, type Absent } from "../json.ts";

/** A modify function: evaluated arguments in, a value or ABSENT out. */
export type JoltFunction = (args: readonly unknown[]) => unknown | Absent;

/** A function result: a value or ABSENT. */
export type R = unknown | Absent;

/** One list argument is the list; one other non-null argument is a single; several are a list. */
export function base(single: (a: unknown) => R, list: (l: readonly unknown[]) => R): JoltFunction {
  return (args) => {
    if (args.length === 0) return ABSENT;
    if (args.length === 1) {
      const a = args[0];
      if (Array.isArray(a)) return a.length === 0 ? ABSENT : list(a);
      if (a === null || a === undefined) return ABSENT;
      return single(a);
    }
    return list(args);
  };
}

/** Applies `single` to one value, or to each element (keeping those it cannot convert). */
export function singleFn(single: (a: unknown) => R): JoltFunction {
  return base(single, (l) =>
    l.map((o) => {
      const r = single(o);
      return r === ABSENT ? o : r;
    }));
}

/** Works on a list of values only. */
export function listFn(list: (l: readonly unknown[]) => R): JoltFunction {
  return base(() => ABSENT, list);
}

/** First argument is special (a separator, an index…), the rest is the data. */
export function argDriven<S>(
  isSpecial: (v: unknown) => v is S,
  single: (s: S, a: unknown) => R,
  list: (s: S, l: readonly unknown[]) => R,
): JoltFunction {
  return (args) => {
    if (args.length === 1 && Array.isArray(args[0])) args = args[0];
    if (args.length < 2 || !isSpecial(args[0])) return ABSENT;
    const special = args[0];
    if (args.length === 2) {
      return Array.isArray(args[1]) ? list(special, args[1]) : single(special, args[1]);
    }
    return list(special, args.slice(1));
  };
}

/** Special first argument, then one value or each element of a list. */
export function argDrivenSingle<S>(
  isSpecial: (v: unknown) => v is S,
  single: (s: S, a: unknown) => R,
) {
  return argDriven(isSpecial, single, (s, l) =>
    l.map((o) => {
      const r = single(s, o);
      return r === ABSENT ? o : r;
    }));
}

/** Special first argument, then a list of values. */
export function argDrivenList<S>(
  isSpecial: (v: unknown) => v is S,
  list: (s: S, l: readonly unknown[]) => R,
) {
  return argDriven(isSpecial, () => ABSENT, list);
}

/** For the squash functions: a single list/map argument, or all arguments as a list. */
export function squashFn(single: (a: unknown) => R): JoltFunction {
  return (args) => {
    if (args.length === 0) return ABSENT;
    if (args.length === 1) {
      const a = args[0];
      if (Array.isArray(a) && a.length === 0) return ABSENT;
      if (a === null || a === undefined) return ABSENT;
      return single(a);
    }
    return single([...args]);
  };
}

/** Type guard for string arguments. */
export const isString = (v: unknown): v is string => typeof v === "string";
