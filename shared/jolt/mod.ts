/**
 * JOLT transforms for the gateway: a TypeScript engine that behaves like Bazaarvoice's Java JOLT
 * (shift, default, remove, sort, cardinality and the three modify flavours). Specs are compiled
 * once; applying a compiled spec never modifies its input.
 *
 * @example
 * ```ts
 * const spec = compile([{ operation: "shift", spec: { a: "b" } }]);
 * spec.apply({ a: 1 }); // { b: 1 }
 * ```
 *
 * @module
 */

export { compile, type CompiledSpec, type OperationName, parseSpec } from "./chain.ts";
export { JoltSpecError, JoltTransformError } from "./errors.ts";
export {
  MAX_ARRAY_INDEX,
  MAX_RUN_OUTPUT,
  MAX_SPEC_DEPTH,
  MAX_SPEC_NODES,
  specSizeProblem,
} from "./limits.ts";
export { FUNCTIONS, JOLT_FUNCTIONS } from "./functions.ts";
