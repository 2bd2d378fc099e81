/**
 * A JOLT chain (JOLT's Chainr): a JSON array of `{ "operation", "spec" }` entries, compiled once
 * and applied in order.
 */

import {
  chargeJson,
  checkRunSteps,
  MAX_COMPILE_STEPS,
  MAX_RUN_STEPS,
  specSizeProblem,
  startRun,
  startSteps,
} from "./limits.ts";
import { BudgetIssue, JoltSpecError, runFailure, SpecIssue } from "./errors.ts";
import { describe, has, isMap, Ownership } from "../json.ts";
import { ShiftOp } from "./shift.ts";
import type { ShiftNode } from "./shift_parts.ts";
import { DefaultOp } from "./default.ts";
import { RemoveOp } from "./remove.ts";
import { SortOp } from "./sort.ts";
import { CardinalityOp } from "./cardinality.ts";
import { ModifyOp } from "./modify.ts";

/** The operation names a chain entry may use (JOLT's short names). */
export type OperationName =
  | "shift"
  | "default"
  | "remove"
  | "sort"
  | "cardinality"
  | "modify-overwrite-beta"
  | "modify-default-beta"
  | "modify-define-beta";

/** Short names, plus the Java class names JOLT also accepts, to their operation. */
const OPERATIONS: Record<string, OperationName> = {
  "shift": "shift",
  "default": "default",
  "remove": "remove",
  "sort": "sort",
  "cardinality": "cardinality",
  "modify-overwrite-beta": "modify-overwrite-beta",
  "modify-default-beta": "modify-default-beta",
  "modify-define-beta": "modify-define-beta",
  "com.bazaarvoice.jolt.Shiftr": "shift",
  "com.bazaarvoice.jolt.Defaultr": "default",
  "com.bazaarvoice.jolt.Removr": "remove",
  "com.bazaarvoice.jolt.Sortr": "sort",
  "com.bazaarvoice.jolt.CardinalityTransform": "cardinality",
  "com.bazaarvoice.jolt.Modifier$Overwritr": "modify-overwrite-beta",
  "com.bazaarvoice.jolt.Modifier$Defaultr": "modify-default-beta",
  "com.bazaarvoice.jolt.Modifier$Definr": "modify-define-beta",
};

/** One compiled operation. */
interface Op {
  /** Whether it edits its input in place (copy-on-write through the Ownership). */
  readonly inPlace: boolean;
  /** The shift itself, for the fast path. */
  readonly shift?: ShiftOp;
  apply(input: unknown, own: Ownership, context: unknown): unknown;
}

/** A compiled chain of JOLT operations, run by the reference walker. */
export interface CompiledChain {
  /** The operations, in order (short names). */
  readonly operations: readonly OperationName[];
  /**
   * Applies the chain to `input` and returns the output. The input is never modified; parts
   * of it may be shared with the output. `context` feeds `^` lookups of the modify operations.
   */
  apply(input: unknown, context?: Record<string, unknown>): unknown;
  /** The root of the chain's only operation when that is a shift (what fast/ compiles), else null. */
  readonly loneShift: ShiftNode | null;
  /** The work steps one run may spend (limits.ts). */
  readonly maxSteps: number;
}

/**
 * Builds one operation. `editedLater` says whether an in-place operation follows: only then
 * does shift register the containers it creates (so that they are not copied again).
 */
function build(name: OperationName, spec: unknown, editedLater: () => boolean): Op {
  switch (name) {
    case "shift": {
      const op = new ShiftOp(spec);
      let register: boolean | undefined;
      return {
        inPlace: false,
        shift: op,
        apply: (input, own) => {
          register ??= editedLater();
          return op.apply(input, register ? own : null);
        },
      };
    }
    case "default": {
      const op = new DefaultOp(spec);
      return { inPlace: true, apply: (input, own) => op.apply(input, own) };
    }
    case "remove": {
      const op = new RemoveOp(spec);
      return { inPlace: true, apply: (input, own) => op.apply(input, own) };
    }
    case "sort": {
      const op = new SortOp();
      return { inPlace: false, apply: (input, own) => op.apply(input, own) };
    }
    case "cardinality": {
      const op = new CardinalityOp(spec);
      return { inPlace: true, apply: (input, own) => op.apply(input, own) };
    }
    case "modify-overwrite-beta":
    case "modify-default-beta":
    case "modify-define-beta": {
      const op = new ModifyOp(spec, name);
      return { inPlace: true, apply: (input, own, context) => op.apply(input, own, context) };
    }
  }
}

/**
 * Compiles a chain spec (already parsed JSON); throws JoltSpecError when it is invalid. Each run
 * may spend `maxSteps` work steps (limits.ts; a RangeError outside RUN_STEPS_RANGE).
 */
export function compileChain(specJson: unknown, maxSteps: number = MAX_RUN_STEPS): CompiledChain {
  checkRunSteps(maxSteps);
  // Measured iteratively before any recursive compiler sees it (a 10,000-level spec).
  const tooLarge = specSizeProblem(specJson);
  if (tooLarge) throw new JoltSpecError(-1, [], tooLarge, undefined, "spec_too_large");
  if (!Array.isArray(specJson)) {
    throw new JoltSpecError(-1, [], `a chain spec must be a JSON array, got ${describe(specJson)}`);
  }
  const names: OperationName[] = [];
  const ops: Op[] = [];
  // Compiling tries wildcard keys against their literal siblings (shift's strategy): a product
  // that gets its own budget.
  startSteps(MAX_COMPILE_STEPS, "compile");
  specJson.forEach((entry, index) => {
    if (!isMap(entry)) {
      throw new JoltSpecError(
        index,
        [],
        `each chain entry must be an object, got ${describe(entry)}`,
      );
    }
    const opName = entry.operation;
    if (typeof opName !== "string" || opName.trim() === "") {
      throw new JoltSpecError(index, [], `"operation" must be a non-blank string`);
    }
    const name = has(OPERATIONS, opName) ? OPERATIONS[opName] : undefined;
    if (name === undefined) {
      throw new JoltSpecError(
        index,
        [],
        `unknown operation "${opName}" (expected one of ${
          Object.keys(OPERATIONS).slice(0, 8).join(", ")
        })`,
      );
    }
    if (name !== "sort" && !has(entry, "spec")) {
      throw new JoltSpecError(index, [], `operation "${name}" requires a "spec"`, name);
    }
    try {
      ops.push(build(name, entry.spec, () => ops.slice(index + 1).some((o) => o.inPlace)));
    } catch (err) {
      if (err instanceof SpecIssue) {
        throw new JoltSpecError(index, err.path ?? [], err.message, name);
      }
      if (err instanceof BudgetIssue) {
        throw new JoltSpecError(index, [], err.message, name, "spec_too_large");
      }
      throw err;
    }
    names.push(name);
  });
  return new Chain(names, ops, maxSteps);
}

class Chain implements CompiledChain {
  readonly operations: readonly OperationName[];
  readonly loneShift: ShiftNode | null;
  readonly maxSteps: number;
  readonly #ops: Op[];
  readonly #names: OperationName[];

  constructor(names: OperationName[], ops: Op[], maxSteps: number) {
    this.maxSteps = maxSteps;
    this.#names = names;
    this.operations = Object.freeze(names);
    this.#ops = ops;
    this.loneShift = ops.length === 1 ? ops[0].shift?.root ?? null : null;
  }

  apply(input: unknown, context?: Record<string, unknown>): unknown {
    startRun(this.maxSteps);
    const own = new Ownership();
    let value: unknown = input === undefined ? null : input;
    for (let i = 0; i < this.#ops.length; i++) {
      try {
        value = this.#ops[i].apply(value, own, context ?? null);
      } catch (err) {
        throw runFailure(err, i, this.#names[i]);
      }
    }
    // What the caller will serialize, within the output budget (shared values count at each
    // place, as they will be written).
    const last = this.#ops.length - 1;
    try {
      chargeJson(value);
    } catch (err) {
      throw runFailure(err, last, this.#names[last]);
    }
    return value;
  }
}
