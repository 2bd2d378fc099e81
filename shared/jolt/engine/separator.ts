/**
 * The regular expressions of JOLT's `split`, compiled so that no separator can hold an isolate:
 * a separator may come from a spec (a cloud-pushed one included) or, through `@(…)`, from the
 * data being transformed, so its matching time must be linear in the value split.
 *
 * - A separator V8's linear-time engine can run (the `l` flag, enabled by
 *   `--enable-experimental-regexp-engine`) runs there: any nesting of `*`, `+`, `{n,m}`,
 *   alternations, `^`, `$`, `\b` and lookbehinds.
 * - A separator it cannot run (a lookahead or a backreference) runs in V8's backtracking engine,
 *   and only when the work of one match attempt has a small bound that does not grow with the
 *   value: no `*`, `+` or `{n,}` anywhere, and few enough choices (alternatives times optional
 *   repetitions) that an attempt looks at no more than {@link ATTEMPT_WORK} characters. `(?=[A-Z])`
 *   and `(?<=\d)(?=\D)` qualify; `,(?=(?:[^"]*"[^"]*")*[^"]*$)` does not.
 * - Without the `l` flag (V8 not started with the flag), every separator takes the second path.
 *
 * A refused separator is a spec error when it is written in the spec, and no value (as for an
 * invalid regular expression) when it comes from the data.
 *
 * @module
 */
import { RegExpParser } from "@eslint-community/regexpp";

/** Longest separator accepted, in UTF-16 code units. */
export const SEPARATOR_MAX_LENGTH = 1024;

/** Most characters one backtracking match attempt may look at (see the module comment). */
export const ATTEMPT_WORK = 4096;

/** A compiled separator, or why there is none. */
export type Separator = { re: RegExp } | { refused: string };

/** True when this V8 accepts the `l` (linear engine) flag. */
export const LINEAR_ENGINE: boolean = (() => {
  try {
    new RegExp("", "l");
    return true;
  } catch {
    return false;
  }
})();

/**
 * Compiles `pattern` as a global regular expression whose matching is linear in the input, or
 * says why it cannot.
 *
 * @example
 * ```ts
 * import { compileSeparator } from "./separator.ts";
 *
 * const ok = compileSeparator("\\s*,\\s*");
 * const refused = compileSeparator("(a+)+(?=b)");
 * console.log("re" in ok, "refused" in refused); // true true (with the V8 flag)
 * ```
 */
export function compileSeparator(pattern: string): Separator {
  if (pattern.length > SEPARATOR_MAX_LENGTH) {
    return { refused: `the separator is longer than ${SEPARATOR_MAX_LENGTH} characters` };
  }
  if (LINEAR_ENGINE) {
    try {
      return { re: new RegExp(pattern, "gl") };
    } catch (err) {
      // Not linear-engine material (a lookahead, a backreference, a large count), or invalid.
      if (!String(err).includes("linear")) return { refused: invalid(err) };
    }
  }
  let work: number;
  try {
    work = attemptWork(pattern);
  } catch (err) {
    return { refused: invalid(err) };
  }
  if (work > ATTEMPT_WORK) {
    return {
      refused: "the separator needs backtracking whose time grows with the value: " +
        (LINEAR_ENGINE
          ? "with a lookahead or a backreference, use no '*', '+' or '{n,}' and few alternatives"
          : "V8 was started without --enable-experimental-regexp-engine, so only separators " +
            "without '*', '+' or '{n,}' are accepted"),
    };
  }
  try {
    return { re: new RegExp(pattern, "g") };
  } catch (err) {
    return { refused: invalid(err) };
  }
}

function invalid(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return /^invalid regular expression/i.test(message)
    ? message
    : `invalid regular expression: ${message}`;
}

// ---------------------------------------------------------------------------------------------
// The bound on one backtracking attempt

type Node =
  | ReturnType<RegExpParser["parsePattern"]>
  | ReturnType<RegExpParser["parsePattern"]>["alternatives"][number]
  | ReturnType<RegExpParser["parsePattern"]>["alternatives"][number]["elements"][number];

/** Bounds of one attempt: the ways it can go (`paths`) and the characters each looks at. */
interface Cost {
  paths: number;
  length: number;
}

const parser = new RegExpParser({ ecmaVersion: 2025 });

/**
 * An upper bound of the characters one match attempt of `pattern` looks at in a backtracking
 * engine: its paths times the length of each. Infinity when a repetition is unbounded.
 */
function attemptWork(pattern: string): number {
  const cost = costOf(parser.parsePattern(pattern, 0, pattern.length, { unicode: false }));
  return cost.paths * Math.max(1, cost.length);
}

function costOf(node: Node): Cost {
  switch (node.type) {
    case "Pattern":
    case "Group":
    case "CapturingGroup":
      return choice(node.alternatives.map(costOf));
    case "Assertion":
      // A lookaround is tried whole; ^ $ \b \B look at a character or two.
      return "alternatives" in node
        ? choice(node.alternatives.map(costOf))
        : { paths: 1, length: 1 };
    case "Alternative":
      return node.elements.map(costOf).reduce(sequence, { paths: 1, length: 0 });
    case "Quantifier":
      return repeat(costOf(node.element), node.min, node.max);
    case "Backreference": {
      // As long as what the group can capture.
      const groups = Array.isArray(node.resolved) ? node.resolved : [node.resolved];
      const length = Math.max(0, ...groups.map((g) => costOf(g).length));
      return { paths: 1, length };
    }
    default:
      return { paths: 1, length: 1 }; // a character, a class, a set
  }
}

/** One of several ways (alternatives). */
function choice(costs: Cost[]): Cost {
  return {
    paths: costs.reduce((n, c) => n + c.paths, 0),
    length: Math.max(0, ...costs.map((c) => c.length)),
  };
}

/** One after the other: every way of the first is followed by every way of the second. */
function sequence(a: Cost, b: Cost): Cost {
  return { paths: a.paths * b.paths, length: a.length + b.length };
}

/** `min` to `max` repetitions: each count is a way, each repetition multiplies. */
function repeat(c: Cost, min: number, max: number): Cost {
  if (max === Infinity) return { paths: Infinity, length: Infinity };
  let paths = 0;
  for (let k = min; k <= max && paths <= ATTEMPT_WORK; k++) paths += c.paths ** k;
  return { paths, length: c.length * max };
}
