/** Helpers for the JOLT engine's tests (not a test file itself). */

import { deepStrictEqual, strictEqual } from "node:assert";
import { compile } from "./mod.ts";

/** A deep-frozen deep copy: applying a spec to it proves the input is never modified. */
export function frozen<T>(v: T): T {
  const copy = structuredClone(v);
  const freeze = (x: unknown): void => {
    if (x !== null && typeof x === "object") {
      Object.freeze(x);
      for (const k of Object.keys(x)) freeze((x as Record<string, unknown>)[k]);
    }
  };
  freeze(copy);
  return copy;
}

/**
 * Compiles a one-operation chain and applies it to a frozen copy of `input`. Every call also
 * applies the chain to the input's JSON bytes (`applyJson`) and asserts that, when that path
 * takes the document, it writes exactly what JSON.stringify writes for the parsed result.
 */
export function run(
  operation: string,
  spec: unknown,
  input: unknown,
  context?: Record<string, unknown>,
): unknown {
  const entry = spec === undefined ? { operation } : { operation, spec };
  const compiled = compile([entry]);
  const output = compiled.apply(frozen(input), context);
  if (context === undefined) {
    const text = JSON.stringify(input === undefined ? null : input);
    const raw = compiled.applyJson(new TextEncoder().encode(text));
    if (raw !== null) {
      strictEqual(
        new TextDecoder().decode(raw),
        JSON.stringify(output),
        `raw JSON path differs for ${JSON.stringify(spec)} on ${text}`,
      );
    }
  }
  return output;
}

/** Exact equality of JSON values (types, nulls, array order; object key order ignored). */
export function assertJson(actual: unknown, expected: unknown, msg?: string): void {
  deepStrictEqual(actual, expected, msg);
}

/** Exact equality including object key order (compares the serialized text). */
export function assertOrdered(actual: unknown, expected: unknown, msg?: string): void {
  strictEqual(JSON.stringify(actual), JSON.stringify(expected), msg);
}

/** Asserts that `fn` throws an error of class `cls` whose message matches `re`; returns it. */
export function assertThrows<E extends Error>(
  fn: () => unknown,
  cls: new (...args: never[]) => E,
  re?: RegExp,
): E {
  try {
    fn();
  } catch (err) {
    if (!(err instanceof cls)) throw new Error(`expected ${cls.name}, got ${err}`);
    if (re && !re.test(err.message)) {
      throw new Error(`message ${JSON.stringify(err.message)} !~ ${re}`);
    }
    return err;
  }
  throw new Error(`expected ${cls.name} to be thrown`);
}
