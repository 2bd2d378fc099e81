/**
 * Bounds on the work and output of one transform run and on the specs themselves, so that no spec
 * and no body can make a transform fill memory or hold the event loop:
 *
 * - one run may spend at most {@link MAX_RUN_STEPS} work steps, counted inside the loops (see
 *   {@link chargeSteps}); compiling a spec at most {@link MAX_COMPILE_STEPS};
 * - an array index written (from the spec, as in `default`'s `"items[]": {"99999999": 0}`, or from
 *   the data, as in shift's `[&1]`) is at most {@link MAX_ARRAY_INDEX}: the nulls before it are real;
 * - the nulls one run pads arrays with, the pieces its `split` calls make, and the values it copies out of the spec (a `default`
 *   literal applied under `*` to every element), together stay under {@link MAX_RUN_OUTPUT};
 * - a spec is at most {@link MAX_SPEC_DEPTH} levels deep and {@link MAX_SPEC_NODES} values large;
 * - the output of one run, as JSON, and the strings its functions build are at most
 *   {@link OUTPUT_CHARS_PER_STEP} characters per step of its budget (see {@link chargeText}): a
 *   value copied to many places, or a string doubled again and again, would otherwise make a
 *   small body into gigabytes (a 5.6 MB body copying a 5 MB value into 200,000 items took 24 GB).
 *
 * Runs are synchronous, so one budget per process (per isolate) suffices: {@link startRun}
 * resets it.
 */
import { BudgetIssue, TransformIssue } from "./errors.ts";

/** Largest array index a transform writes at. */
export const MAX_ARRAY_INDEX = 1_000_000;
/** Values one run may make: nulls padding arrays, copied spec values, pieces of split strings. */
export const MAX_RUN_OUTPUT = 1_000_000;
/** Deepest spec accepted (nested objects and arrays). */
export const MAX_SPEC_DEPTH = 128;
/** Most values (keys, scalars, containers) in one spec. */
export const MAX_SPEC_NODES = 200_000;

/**
 * Work steps one run may spend. A step is about one unit of a walk: an input key tried against a
 * spec key (a literal probe or one wildcard attempt), a level of an output path written, a node
 * visited by default/remove/sort/cardinality, a modify function called or a list element passed
 * to one; reading a key costs one step per {@link CHARS_PER_STEP} characters. Measured on the
 * project's 2-core machine (docs/transforms.md): 4-73 ns a step, so the whole budget is spent in
 * 0.1-0.5 s (about twice that under load), while an 8.8 MB FHIR bundle through a four-operation
 * chain takes 2.2 million steps.
 */
export const MAX_RUN_STEPS = 10_000_000;
/** Smallest and largest run budget a spec may be compiled with (`compile`'s `maxSteps`). */
export const RUN_STEPS_RANGE = { min: 10_000, max: 100_000_000 } as const;
/** Work steps compiling one chain may spend (wildcard keys tried against literal siblings). */
export const MAX_COMPILE_STEPS = 10_000_000;
/** Characters a string scan reads per step. */
export const CHARS_PER_STEP = 64;
/**
 * Characters of output one run may produce per work step of its budget: 80 million with the
 * default budget, eight times the default `max_body_size`.
 */
export const OUTPUT_CHARS_PER_STEP = 8;

let outputLeft = MAX_RUN_OUTPUT;
let stepsLeft = MAX_RUN_STEPS;
let stepsLimit = MAX_RUN_STEPS;
let stepsWhat = "run";
let textLimit = MAX_RUN_STEPS * OUTPUT_CHARS_PER_STEP;
let textLeft = textLimit;

/** Starts a run's budgets: output, and `maxSteps` work steps. */
export function startRun(maxSteps: number = MAX_RUN_STEPS): void {
  outputLeft = MAX_RUN_OUTPUT;
  textLeft = textLimit = maxSteps * OUTPUT_CHARS_PER_STEP;
  startSteps(maxSteps, "run");
}

/** Characters of output the run started by `startRun(maxSteps)` may produce. */
export function outputLimit(maxSteps: number): number {
  return maxSteps * OUTPUT_CHARS_PER_STEP;
}

/**
 * Charges `n` characters of output (a string a function built, or the run's output as JSON);
 * throws once the run's output budget is spent.
 */
export function chargeText(n: number): void {
  if ((textLeft -= n) < 0) {
    textLeft = 0;
    // A budget of the run like its steps (it is derived from them): 422 on a request.
    throw new BudgetIssue(
      "run",
      stepsLimit,
      `the transform's output would be more than ${textLimit} characters ` +
        `(${OUTPUT_CHARS_PER_STEP} per work step of its budget): a large value copied to many ` +
        "places, or a string built too long",
    );
  }
}

/**
 * Charges the size of `value` written as JSON (near enough: strings and keys with their quotes,
 * a few characters per number, literal or separator). A value shared by several places counts at
 * each place, as JSON.stringify would write it; the measure stops once it passes the budget, so it
 * costs no more than writing the output would.
 */
export function chargeJson(value: unknown): void {
  chargeText(jsonSize(value, textLeft, 0));
}

/** Levels measured by recursion; deeper ones (a body with a raised `max_json_depth`) by a loop. */
const RECURSIVE_DEPTH = 200;

/** The JSON size of `v`, or a figure past `cap` once it is known to be larger. */
function jsonSize(v: unknown, cap: number, depth: number): number {
  if (typeof v === "string") return v.length + 2;
  if (v === null || typeof v !== "object") return 5;
  if (depth > RECURSIVE_DEPTH) return jsonSizeLoop(v, cap);
  let n = 2;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length && n <= cap; i++) n += jsonSize(v[i], cap - n, depth + 1) + 1;
  } else {
    for (const key in v) {
      n += key.length + 4 + jsonSize((v as Record<string, unknown>)[key], cap - n, depth + 1);
      if (n > cap) break;
    }
  }
  return n;
}

/** {@link jsonSize} without recursion. */
function jsonSizeLoop(root: unknown, cap: number): number {
  let n = 0;
  const stack: unknown[] = [root];
  while (stack.length > 0 && n <= cap) {
    const v = stack.pop();
    if (typeof v === "string") n += v.length + 3;
    else if (v === null || typeof v !== "object") n += 6;
    else if (Array.isArray(v)) {
      n += 2;
      for (const e of v) stack.push(e);
    } else {
      n += 2;
      for (const key in v) {
        n += key.length + 3;
        stack.push((v as Record<string, unknown>)[key]);
      }
    }
  }
  return n;
}

/** `maxSteps` when it is an integer within {@link RUN_STEPS_RANGE}; else a RangeError. */
export function checkRunSteps(maxSteps: number): number {
  if (
    !Number.isInteger(maxSteps) || maxSteps < RUN_STEPS_RANGE.min || maxSteps > RUN_STEPS_RANGE.max
  ) {
    throw new RangeError(
      `maxSteps must be an integer from ${RUN_STEPS_RANGE.min} to ${RUN_STEPS_RANGE.max}, not ${maxSteps}`,
    );
  }
  return maxSteps;
}

/** Starts the output budget only (each shift of a chain has its own; steps are the chain's). */
export function startOutput(): void {
  outputLeft = MAX_RUN_OUTPUT;
}

/** Starts a step budget of `limit` for `what` ("run", or "compile" while a spec compiles). */
export function startSteps(limit: number, what: string): void {
  stepsLeft = limit;
  stepsLimit = limit;
  stepsWhat = what;
}

/**
 * Charges `n` work steps; throws {@link BudgetIssue} once the budget is spent. Called inside the
 * loops of every operation and of the fast path's generated code, so that a run stops within one
 * loop turn of its budget instead of spinning.
 */
export function chargeSteps(n: number): void {
  if ((stepsLeft -= n) < 0) overBudget();
}

/** Steps for scanning `chars` characters (at least one). */
export function scanSteps(chars: number): number {
  return 1 + Math.floor(chars / CHARS_PER_STEP);
}

/** Work steps spent since the budget started (for measurements and tests). */
export function stepsSpent(): number {
  return stepsLimit - stepsLeft;
}

function overBudget(): never {
  stepsLeft = 0; // a caller that catches and goes on keeps failing fast
  throw new BudgetIssue(
    stepsWhat,
    stepsLimit,
    stepsWhat === "compile"
      ? `compiling the spec needs more than ${stepsLimit} work steps (its budget): too many ` +
        "wildcard keys tried against too many literal keys beside them"
      : `the transform needs more than ${stepsLimit} work steps on this input (the budget of ` +
        "one run): too many keys or elements for the spec's keys, or keys too long for its wildcards",
  );
}

/** Charges `n` produced values to the run; throws when the budget is spent. */
export function chargeOutput(n: number): void {
  outputLeft -= n;
  if (outputLeft < 0) {
    throw new TransformIssue(
      `the transform would make more than ${MAX_RUN_OUTPUT} values (nulls padding arrays, copied spec values, pieces of split strings)`,
    );
  }
}

/** Refuses an index over {@link MAX_ARRAY_INDEX}; `what` names where it came from. */
export function checkIndex(index: number, what: string): void {
  if (index > MAX_ARRAY_INDEX) {
    throw new TransformIssue(
      `${what} index ${index} is over the limit of ${MAX_ARRAY_INDEX} (the nulls before it would all be written)`,
    );
  }
}

/** Pads `list` with nulls up to `length` elements, within the run's budget. */
export function padTo(list: unknown[], length: number, what: string): void {
  if (list.length >= length) return;
  checkIndex(length - 1, what);
  chargeOutput(length - list.length);
  while (list.length < length) list.push(null);
}

/** Number of values in `v` (1 for a scalar), counting at most `cap` + 1. */
export function valueCount(v: unknown, cap = Number.MAX_SAFE_INTEGER): number {
  let count = 0;
  const stack: unknown[] = [v];
  while (stack.length > 0 && count <= cap) {
    const x = stack.pop();
    count++;
    if (Array.isArray(x)) { for (const e of x) stack.push(e); }
    else if (x !== null && typeof x === "object") {
      for (const e of Object.values(x)) stack.push(e);
    }
  }
  return count;
}

/**
 * Why `spec` is too deep or too large, or undefined. Iterative: a spec nested 100,000 levels
 * is measured without recursion (and refused before any recursive compiler sees it).
 */
export function specSizeProblem(spec: unknown): string | undefined {
  let nodes = 0;
  const stack: [unknown, number][] = [[spec, 1]];
  while (stack.length > 0) {
    const [x, depth] = stack.pop()!;
    if (++nodes > MAX_SPEC_NODES) return `the spec has more than ${MAX_SPEC_NODES} values`;
    if (x === null || typeof x !== "object") continue;
    if (depth > MAX_SPEC_DEPTH) return `the spec is nested deeper than ${MAX_SPEC_DEPTH} levels`;
    for (const e of Array.isArray(x) ? x : Object.values(x)) stack.push([e, depth + 1]);
  }
  return undefined;
}
