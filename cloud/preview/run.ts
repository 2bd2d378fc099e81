/**
 * One JOLT preview, start to end: compile the chain, run it on the sample, and say what came of
 * it as plain data (it crosses from the preview worker to the service by structured clone).
 * Imports only the JOLT engine, so that a worker starts quickly.
 */
import {
  compile,
  JoltBudgetExceeded,
  JoltSpecError,
  JoltTransformError,
} from "../../shared/jolt/mod.ts";

/** One problem of a preview, at a field of the request (`spec.0.spec.a`, `input`). */
export interface PreviewProblem {
  field: string;
  message: string;
}

/** What a preview came to: the output, problems of the spec or input, or a spent budget. */
export type PreviewOutcome =
  | { kind: "output"; output: unknown }
  | { kind: "problems"; problems: PreviewProblem[] }
  | { kind: "budget"; message: string; limit: number; operation: string };

/**
 * Deepest sample accepted: the gateway's default `max_json_depth`, which no body a transform sees
 * there passes. The engine's walkers recurse: a 64 KB sample can nest 30,000 levels.
 */
export const MAX_SAMPLE_DEPTH = 128;

/** Compiles `spec` and applies it to `input`; JOLT's own errors become outcomes, others throw. */
export function runPreview(spec: unknown, input: unknown): PreviewOutcome {
  if (deeperThan(input, MAX_SAMPLE_DEPTH)) {
    return {
      kind: "problems",
      problems: [{
        field: "input",
        message: `the sample is nested deeper than ${MAX_SAMPLE_DEPTH} levels (the gateway's ` +
          "default max_json_depth)",
      }],
    };
  }
  let chain;
  try {
    chain = compile(spec);
  } catch (err) {
    if (err instanceof JoltSpecError) return { kind: "problems", problems: [specProblem(err)] };
    throw err;
  }
  try {
    return { kind: "output", output: chain.apply(input) ?? null };
  } catch (err) {
    if (err instanceof JoltBudgetExceeded) {
      return { kind: "budget", message: err.message, limit: err.limit, operation: err.operation };
    }
    if (err instanceof JoltTransformError) {
      return { kind: "problems", problems: [{ field: "input", message: err.message }] };
    }
    throw err;
  }
}

/** True when `value` nests arrays or objects deeper than `limit` (measured without recursion). */
function deeperThan(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== "object") continue;
    if (depth + 1 > limit) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, depth + 1]);
  }
  return false;
}

/** The field of a spec error, as checkTransformSpec names it (`spec.0.spec.a.b`). */
function specProblem(err: JoltSpecError): PreviewProblem {
  const field = err.operationIndex < 0
    ? "spec"
    : ["spec", err.operationIndex, ...(err.path.length ? ["spec", ...err.path] : [])].join(".");
  return { field, message: err.message };
}
