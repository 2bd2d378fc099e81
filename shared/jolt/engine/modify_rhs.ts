/**
 * Right-hand sides of the modify operations: literals, `@(n,path)` lookups, `^path` context
 * lookups and `=function(args…)` calls, parsed once into evaluators.
 */

import { specFail, TransformIssue } from "./errors.ts";
import { chargeSteps, chargeText } from "./limits.ts";
import { ABSENT, type Absent, deepCopy, deepFreeze, type JsonMap } from "../json.ts";
import { toKindedNumber } from "./java.ts";
import { compileSeparator } from "./separator.ts";
import { type JoltFunction, lookupFunction } from "./functions.ts";
import { TransposeElement } from "./path_elements.ts";
import { DotPath } from "./paths.ts";
import type { WalkedPath } from "./walked_path.ts";

/** What evaluation needs besides the walked path: the context wrapped as `{ root: context }`. */
export interface RhsState {
  readonly context: JsonMap;
}

/** One function argument (or a whole non-function RHS). */
export interface Arg {
  evaluate(wp: WalkedPath, st: RhsState): unknown | Absent;
}

/** A constant (copied on every use, so outputs never share it). */
export class LiteralArg implements Arg {
  readonly #value: unknown;
  constructor(value: unknown) {
    this.#value = deepFreeze(deepCopy(value));
  }
  evaluate(): unknown {
    const v = this.#value;
    return v !== null && typeof v === "object" ? deepCopy(v) : v;
  }
}

class SelfArg implements Arg {
  readonly #tpe: TransposeElement;
  constructor(text: string) {
    const path = DotPath.parse(text, true);
    const last = path.elements[path.elements.length - 1];
    if (!(last instanceof TransposeElement)) specFail(`expected an '@' path element in "${text}"`);
    this.#tpe = last;
  }
  evaluate(wp: WalkedPath): unknown | Absent {
    return this.#tpe.lookup(wp);
  }
}

class ContextArg implements Arg {
  readonly #path: DotPath;
  constructor(text: string) {
    this.#path = DotPath.parse(text, true);
  }
  evaluate(wp: WalkedPath, st: RhsState): unknown | Absent {
    return this.#path.read(st.context, wp);
  }
}

/** `^…` context lookup, `@…` lookup, or a literal (parsed when it is a function argument). */
function buildArg(text: string, forFunction: boolean): Arg {
  if (text.startsWith("^")) return new ContextArg(text.slice(1));
  if (text.startsWith("@")) return new SelfArg(text);
  if (!forFunction) return new LiteralArg(text);
  if (text.length === 0) return new LiteralArg(null);
  if (text.startsWith("'") && text.endsWith("'")) {
    if (text.length < 2) specFail(`unterminated quote in argument "${text}"`);
    return new LiteralArg(text.slice(1, -1));
  }
  const lower = text.toLowerCase();
  if (lower === "true" || lower === "false") return new LiteralArg(lower === "true");
  const n = toKindedNumber(text);
  return new LiteralArg(n !== null ? n.value : text);
}

/** Splits `name(a, 'b,c', @(1,x))` into the name and trimmed argument texts (JOLT's rules). */
function parseFunctionArgs(text: string): string[] {
  const open = text.indexOf("(");
  if (open < 0 || text.length - 1 < open + 1) specFail(`malformed function call "=${text}"`);
  const out = [text.slice(0, open)];
  const inner = text.slice(open + 1, text.length - 1);
  let sb = "";
  let inParens = false;
  let inQuotes = false;
  for (const c of inner) {
    if (c === "(" && !inQuotes) inParens = true;
    else if (c === ")" && !inQuotes) inParens = false;
    else if (c === "'") inQuotes = !inQuotes;
    else if (c === "," && !inParens && !inQuotes) {
      out.push(sb.trim());
      sb = "";
      continue;
    }
    sb += c;
  }
  out.push(sb.trim());
  return out;
}

/** A function call or a single argument (JOLT's FunctionEvaluator). */
export class Evaluator {
  readonly #fn: JoltFunction | null;
  readonly #args: Arg[];

  constructor(fn: JoltFunction | null, args: Arg[]) {
    this.#fn = fn;
    this.#args = args;
  }

  /**
   * Parses a string right-hand side: a literal, `@…`, `^…` or `=fn(…)`. An unknown function is a
   * spec error, except as one entry of a list (`inList`), where JOLT moves on to the next entry:
   * it then never yields a value.
   */
  static parse(rhs: string, inList = false): Evaluator {
    if (!rhs.startsWith("=")) return new Evaluator(null, [buildArg(rhs, false)]);
    const name = !rhs.includes("(") && !rhs.endsWith(")")
      ? rhs.slice(1)
      : parseFunctionArgs(rhs.slice(1))[0];
    if (inList && lookupFunction(name) === undefined) return NOTHING;
    if (!rhs.includes("(") && !rhs.endsWith(")")) return new Evaluator(fnNamed(name), []);
    const parts = parseFunctionArgs(rhs.slice(1));
    const fn = fnNamed(parts[0]);
    const args = parts.slice(1).map((a) => buildArg(a, true));
    if (parts[0] === "split") checkSeparator(args[0]);
    return new Evaluator(fn, args);
  }

  /** The value for the current key (`input` is its current value), or ABSENT. */
  evaluate(input: unknown | Absent, wp: WalkedPath, st: RhsState): unknown | Absent {
    const fn = this.#fn;
    const args = this.#args;
    chargeSteps(1);
    try {
      if (fn === null) return args[0].evaluate(wp, st);
      let out: unknown;
      if (args.length === 1) {
        const v = args[0].evaluate(wp, st);
        out = v === ABSENT ? fn([]) : fn(charged([v]));
      } else if (args.length > 1) {
        out = fn(charged(args.map((a) => {
          const v = a.evaluate(wp, st);
          return v === ABSENT ? null : v;
        })));
      } else {
        // "=fn" with no argument list: the current value is the argument.
        out = input === ABSENT ? fn([]) : fn(charged([input]));
      }
      // A built string is new memory: concat of a value with itself, again and again, doubles it.
      if (typeof out === "string") chargeText(out.length);
      return out;
    } catch (err) {
      // A budget spent stops the run; it is not the function's failure.
      if (err instanceof TransformIssue) throw err;
      return ABSENT; // JOLT swallows function failures: no value, no write
    }
  }
}

/** `args` after charging the list functions' linear work: a step per element of a list argument. */
function charged(args: unknown[]): unknown[] {
  let n = args.length;
  for (const a of args) if (Array.isArray(a)) n += a.length;
  chargeSteps(n);
  return args;
}

/** An entry that never yields a value (an unknown function in a list). */
const NOTHING = new Evaluator(() => {
  throw new Error("unknown function");
}, []);

/**
 * A `split` separator written in the spec is compiled now: one that is invalid or could not run in
 * linear time is a spec error, not a function that never yields a value.
 */
function checkSeparator(arg: Arg | undefined): void {
  if (!(arg instanceof LiteralArg)) return; // from the data: checked when it is used
  const sep = arg.evaluate();
  if (typeof sep !== "string") return;
  const compiled = compileSeparator(sep);
  if ("refused" in compiled) specFail(`split separator '${sep}': ${compiled.refused}`);
}

function fnNamed(name: string): JoltFunction {
  const fn = lookupFunction(name);
  if (fn === undefined) specFail(`unknown function "${name}"`);
  return fn;
}
