/**
 * The seam between the reference engine and the fast path: a compiled chain runs on parsed
 * values through the engine, and a lone shift also on bytes through the fast path when it covers
 * the spec and the body (compiled on its first use: specs only being validated never need it).
 */

import {
  compileChain,
  type CompiledChain,
  JoltSpecError,
  type OperationName,
  runFailure,
} from "./engine/mod.ts";
import { FastShift } from "./fast/mod.ts";

/** A compiled chain of JOLT operations. */
export interface CompiledSpec {
  /** The operations, in order (short names). */
  readonly operations: readonly OperationName[];
  /**
   * Applies the chain to `input` and returns the output. The input is never modified; parts
   * of it may be shared with the output. `context` feeds `^` lookups of the modify operations.
   */
  apply(input: unknown, context?: Record<string, unknown>): unknown;
  /**
   * Applies the chain to a UTF-8 JSON document and returns the output as UTF-8 JSON, the same
   * as `JSON.stringify(apply(JSON.parse(text)))`, without parsing when the fast path takes it (a
   * lone shift it covers). Null means "parse and use apply". Throws what `apply` throws
   * (JoltTransformError, JoltBudgetExceeded) when a limit is passed.
   */
  applyJson(bytes: Uint8Array): Uint8Array | null;
}

/** How a spec is compiled. */
export interface CompileOptions {
  /**
   * Work steps one run may spend (default `MAX_RUN_STEPS`, 10,000,000; from 10,000 to
   * 100,000,000): past them a run throws JoltBudgetExceeded.
   */
  maxSteps?: number;
}

/** Compiles a chain spec (already parsed JSON); throws JoltSpecError when it is invalid. */
export function compile(specJson: unknown, options: CompileOptions = {}): CompiledSpec {
  return new Spec(compileChain(specJson, options.maxSteps));
}

/** Parses JSON text and compiles it; bad JSON is a JoltSpecError naming the parse error. */
export function parseSpec(text: string, options: CompileOptions = {}): CompiledSpec {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new JoltSpecError(-1, [], `invalid JSON: ${(err as Error).message}`);
  }
  return compile(json, options);
}

class Spec implements CompiledSpec {
  readonly #chain: CompiledChain;
  /** The fast path: undefined until first asked, null when it declines the spec. */
  #fast: FastShift | null | undefined;

  constructor(chain: CompiledChain) {
    this.#chain = chain;
  }

  get operations(): readonly OperationName[] {
    return this.#chain.operations;
  }

  get #fastShift(): FastShift | null {
    if (this.#fast === undefined) {
      const root = this.#chain.loneShift;
      this.#fast = root === null ? null : FastShift.compile(root, this.#chain.maxSteps);
    }
    return this.#fast;
  }

  apply(input: unknown, context?: Record<string, unknown>): unknown {
    return this.#chain.apply(input, context);
  }

  applyJson(bytes: Uint8Array): Uint8Array | null {
    const fast = this.#fastShift;
    if (fast === null) return null;
    try {
      return fast.run(bytes);
    } catch (err) {
      // The errors the chain would throw: a budget overrun is JoltBudgetExceeded on both paths.
      throw runFailure(err, 0, "shift");
    }
  }
}
