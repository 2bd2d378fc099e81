/**
 * JOLT transforms for the gateway: a TypeScript engine that behaves like Bazaarvoice's Java JOLT
 * (shift, default, remove, sort, cardinality and the three modify flavours). Specs are compiled
 * once; applying a compiled spec never modifies its input.
 *
 * Two parts behind one seam (compile.ts): `engine/`, the reference walker over parsed JSON, and
 * `fast/`, a lone shift compiled to JavaScript over the body's bytes, which either runs or
 * declines (then the body is parsed for the engine). Both give the same bytes.
 *
 * @example
 * ```ts
 * const spec = compile([{ operation: "shift", spec: { a: "b" } }]);
 * spec.apply({ a: 1 }); // { b: 1 }
 * ```
 *
 * @module
 */

export { compile, type CompiledSpec, type CompileOptions, parseSpec } from "./compile.ts";
export {
  FUNCTIONS,
  JOLT_FUNCTIONS,
  JoltBudgetExceeded,
  JoltSpecError,
  JoltTransformError,
  LINEAR_ENGINE,
  MAX_ARRAY_INDEX,
  MAX_COMPILE_STEPS,
  MAX_RUN_OUTPUT,
  MAX_RUN_STEPS,
  MAX_SPEC_DEPTH,
  MAX_SPEC_NODES,
  type OperationName,
  RUN_STEPS_RANGE,
  specSizeProblem,
} from "./engine/mod.ts";
