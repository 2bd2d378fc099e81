/**
 * The JOLT reference engine: every operation (shift, default, remove, sort, cardinality, the
 * three modify flavours) compiled once from its spec and applied by walking parsed JSON, as
 * Bazaarvoice's Java JOLT does. It knows nothing of faster paths; `../fast/` compiles a lone
 * shift's nodes (exported here as {@link ShiftNode} and its parts) into code over raw JSON bytes.
 *
 * @example
 * ```ts
 * import { compileChain } from "./mod.ts";
 *
 * const chain = compileChain([{ operation: "shift", spec: { a: "b" } }]);
 * if (JSON.stringify(chain.apply({ a: 1 })) !== '{"b":1}') throw new Error("shift");
 * if (chain.loneShift === null) throw new Error("a lone shift exposes its root node");
 * ```
 *
 * @module
 */

export { compileChain, type CompiledChain, type OperationName } from "./chain.ts";
export { JoltBudgetExceeded, JoltSpecError, JoltTransformError, runFailure } from "./errors.ts";
export {
  chargeJson,
  chargeSteps,
  chargeText,
  MAX_ARRAY_INDEX,
  MAX_COMPILE_STEPS,
  MAX_RUN_OUTPUT,
  MAX_RUN_STEPS,
  MAX_SPEC_DEPTH,
  MAX_SPEC_NODES,
  outputLimit,
  RUN_STEPS_RANGE,
  specSizeProblem,
  startRun,
  stepsSpent,
} from "./limits.ts";
export { FUNCTIONS, JOLT_FUNCTIONS } from "./functions.ts";
export { LINEAR_ENGINE } from "./separator.ts";

// What the shift compiler of ../fast/ reads from compiled nodes and calls at run time.
export { type CompositeParts, type LeafParts, type ShiftNode, Source } from "./shift_parts.ts";
export type { Children } from "./strategy.ts";
export {
  AmpElement,
  ArrayElement,
  AtElement,
  DollarElement,
  HashElement,
  keyOf,
  LiteralElement,
  type PathElement,
  StarElement,
  TransposeElement,
} from "./path_elements.ts";
export type { DotPath } from "./paths.ts";
export type { Ref } from "./references.ts";
export { putIndex, type ShiftWriter } from "./shift_write.ts";
export { indexKey } from "./walked_path.ts";
export { javaToString, parseJavaInt } from "./java.ts";
