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

/** Compiles `spec` and applies it to `input`; JOLT's own errors become outcomes, others throw. */
export function runPreview(spec: unknown, input: unknown): PreviewOutcome {
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

/** The field of a spec error, as checkTransformSpec names it (`spec.0.spec.a.b`). */
function specProblem(err: JoltSpecError): PreviewProblem {
  const field = err.operationIndex < 0
    ? "spec"
    : ["spec", err.operationIndex, ...(err.path.length ? ["spec", ...err.path] : [])].join(".");
  return { field, message: err.message };
}
