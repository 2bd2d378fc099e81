/** Minimal assertions (JSR's @std/assert is not reachable from our machines). */
import { deepStrictEqual } from "node:assert";

/** Fails with `msg` unless `cond` is truthy. */
export function assert(cond: unknown, msg = "assertion failed"): asserts cond {
  if (!cond) throw new Error(msg);
}

/** Deep equality (node's strict deep equal, readable diff). */
export function assertEquals<T>(actual: T, expected: T, msg?: string): void {
  deepStrictEqual(actual, expected, msg);
}

/** Fails unless `text` matches `re`. */
export function assertMatch(text: string, re: RegExp, msg?: string): void {
  if (!re.test(text)) throw new Error(msg ?? `${JSON.stringify(text)} does not match ${re}`);
}

/** Fails unless `fn` throws (or rejects); returns the error. */
export async function assertRejects(
  fn: () => unknown,
  match?: RegExp,
): Promise<Error> {
  try {
    await fn();
  } catch (err) {
    if (match && !match.test((err as Error).message)) {
      throw new Error(`error ${JSON.stringify((err as Error).message)} does not match ${match}`);
    }
    return err as Error;
  }
  throw new Error("expected an error");
}

/** Fails unless `fn` throws synchronously; returns the error. */
export function assertThrows(fn: () => unknown, match?: RegExp): Error {
  try {
    fn();
  } catch (err) {
    if (match && !match.test((err as Error).message)) {
      throw new Error(`error ${JSON.stringify((err as Error).message)} does not match ${match}`);
    }
    return err as Error;
  }
  throw new Error("expected an error");
}
