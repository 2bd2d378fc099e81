/** Errors of the JOLT engine: spec problems (at compile time) and transform failures. */

/** A spec that cannot be compiled: which operation, where inside its spec, and why. */
export class JoltSpecError extends Error {
  /** Index of the chain entry at fault; -1 when the chain itself (or its JSON text) is bad. */
  readonly operationIndex: number;
  /** Key path inside that operation's `spec` (empty for problems of the entry itself). */
  readonly path: readonly string[];
  /** What is wrong, without the location. */
  readonly reason: string;
  /** Stable code: `spec_too_large` for a spec over the size or depth limits, else `invalid_spec`. */
  readonly code: "invalid_spec" | "spec_too_large";

  /** An error in the spec at `path` (operation index and key path). */
  constructor(
    operationIndex: number,
    path: readonly string[],
    reason: string,
    operation?: string,
    code: "invalid_spec" | "spec_too_large" = "invalid_spec",
  ) {
    const where = operationIndex < 0
      ? "JOLT spec"
      : `JOLT spec operation ${operationIndex}${operation ? ` (${operation})` : ""}`;
    const at = path.length > 0 ? ` at ${JSON.stringify(path)}` : "";
    super(`${where}${at}: ${reason}`);
    this.name = "JoltSpecError";
    this.operationIndex = operationIndex;
    this.path = path;
    this.reason = reason;
    this.code = code;
  }
}

/** A transform that cannot run on this input (JOLT's TransformException). */
export class JoltTransformError extends Error {
  /** Index of the chain entry that failed. */
  readonly operationIndex: number;

  /** A failure of operation `operationIndex` (named `operation` when given) while it ran. */
  constructor(operationIndex: number, message: string, operation?: string) {
    super(
      `JOLT transform operation ${operationIndex}${operation ? ` (${operation})` : ""}: ${message}`,
    );
    this.name = "JoltTransformError";
    this.operationIndex = operationIndex;
  }
}

/**
 * A run stopped because it spent its work budget (limits.ts `MAX_RUN_STEPS`) in operation
 * `operation`: the input is too large or too many-keyed for the spec, not a bug of either.
 */
export class JoltBudgetExceeded extends JoltTransformError {
  /** Stable code: `transform_budget_exceeded`. */
  readonly code = "transform_budget_exceeded";
  /** The operation that spent the budget (`shift`, `remove`…). */
  readonly operation: string;
  /** The budget, in work steps. */
  readonly limit: number;

  /** Operation `operationIndex` (`operation`) went past `limit` steps. */
  constructor(operationIndex: number, operation: string, limit: number, message: string) {
    super(operationIndex, message, operation);
    this.name = "JoltBudgetExceeded";
    this.operation = operation;
    this.limit = limit;
  }
}

/**
 * Internal: a spec problem found while compiling one operation. The path is filled in by the
 * innermost spec node that knows it; the chain compiler turns it into a JoltSpecError.
 */
export class SpecIssue extends Error {
  path: readonly string[] | null;
  constructor(reason: string, path: readonly string[] | null = null) {
    super(reason);
    this.path = path;
  }
}

/** Internal: a transform-time failure, turned into JoltTransformError by the chain. */
export class TransformIssue extends Error {}

/** Internal: a step budget spent (limits.ts), turned into JoltBudgetExceeded by the chain. */
export class BudgetIssue extends TransformIssue {
  /** What spent it: "run" or "compile". */
  readonly what: string;
  /** The budget, in steps. */
  readonly limit: number;
  constructor(what: string, limit: number, message: string) {
    super(message);
    this.what = what;
    this.limit = limit;
  }
}

/**
 * The public error for an internal one thrown by operation `index` (`operation`): a budget
 * overrun becomes JoltBudgetExceeded, another transform issue JoltTransformError; anything else
 * is returned as it is.
 */
export function runFailure(err: unknown, index: number, operation: string): unknown {
  if (err instanceof BudgetIssue) {
    return new JoltBudgetExceeded(index, operation, err.limit, err.message);
  }
  if (err instanceof TransformIssue) return new JoltTransformError(index, err.message);
  return err;
}

/** Throws a SpecIssue (internal helper for operation compilers). */
export function specFail(reason: string, path: readonly string[] | null = null): never {
  throw new SpecIssue(reason, path);
}

/** Runs `fn`, attributing any location-less SpecIssue it throws to `path`. */
export function atPath<T>(path: readonly string[], fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof SpecIssue && err.path === null) err.path = path;
    throw err;
  }
}
