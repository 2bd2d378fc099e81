/** Helpers for the JOLT engine's tests (not a test file itself). */

import { deepStrictEqual, strictEqual } from "node:assert";
import { compile } from "../../shared/jolt/mod.ts";
import { compileChain, stepsSpent } from "../../shared/jolt/engine/mod.ts";
import { FastShift } from "../../shared/jolt/fast/mod.ts";

/** A fresh fast path for shift `spec`, or null when the fast path declines the spec. */
export function fastShiftOf(spec: unknown): FastShift | null {
  return FastShift.compile(compileChain([{ operation: "shift", spec }]).loneShift!);
}

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
 * takes the document, it writes exactly what JSON.stringify writes for the parsed result, and
 * charges the run's work budget the same number of steps as the walker.
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
  const walkerSteps = stepsSpent();
  if (context === undefined) {
    const text = JSON.stringify(input === undefined ? null : input);
    const bytes = new TextEncoder().encode(text);
    const raw = compiled.applyJson(bytes);
    if (raw !== null) {
      strictEqual(
        new TextDecoder().decode(raw),
        JSON.stringify(output),
        `raw JSON path differs for ${JSON.stringify(spec)} on ${text}`,
      );
      strictEqual(
        stepsSpent(),
        walkerSteps,
        `raw JSON path charges other steps for ${JSON.stringify(spec)} on ${text}`,
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

/** A small deterministic PRNG (mulberry32), for generated test documents. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const KEY_POOL = ["id", "name", "a", "b", "tag-x", "tag-y", "é", "with space", 'q"uote', "0", "12"];
const STRING_POOL = [
  "",
  "x",
  "Doe",
  "caf\u00e9",
  "line\nbreak",
  "tab\t",
  "\u2028",
  "😀",
  '"',
  "\\",
];
const NUMBER_POOL = [0, -0, 1, -7, 3.5, 0.1 + 0.2, 1e21, 1e-7, 123456789012345680, 2 ** 53 + 2];

/** A random JSON value, its keys, strings and numbers drawn from pools of edge cases. */
export function randomValue(rand: () => number, depth: number): unknown {
  const r = rand();
  if (depth > 4 || r < 0.45) {
    const s = rand();
    if (s < 0.35) return STRING_POOL[Math.floor(rand() * STRING_POOL.length)];
    if (s < 0.7) return NUMBER_POOL[Math.floor(rand() * NUMBER_POOL.length)];
    if (s < 0.8) return null;
    return s < 0.9;
  }
  if (r < 0.7) {
    return Array.from({ length: Math.floor(rand() * 4) }, () => randomValue(rand, depth + 1));
  }
  const out: Record<string, unknown> = {};
  for (let n = Math.floor(rand() * 5); n > 0; n--) {
    out[KEY_POOL[Math.floor(rand() * KEY_POOL.length)]] = randomValue(rand, depth + 1);
  }
  return out;
}

/** JSON text of `v` with random whitespace and, where it changes nothing, escapes and spellings. */
export function looseText(v: unknown, rand: () => number): string {
  const ws = () => [" ", "", "\n", "\t", "  "][Math.floor(rand() * 5)];
  const str = (s: string) => {
    let t = JSON.stringify(s);
    if (rand() < 0.3) {
      t = t.replace(/[a-z]/, (c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0"));
    }
    if (rand() < 0.2) t = t.replace("/", "\\/");
    return t;
  };
  if (typeof v === "string") return str(v);
  if (typeof v === "number") {
    if (Number.isInteger(v) && Math.abs(v) < 1e15 && rand() < 0.3) return `${v}.0`;
    if (rand() < 0.2) return v.toExponential();
    return JSON.stringify(v);
  }
  if (v === null || typeof v === "boolean") return JSON.stringify(v);
  if (Array.isArray(v)) {
    return `[${ws()}${v.map((x) => looseText(x, rand)).join(`${ws()},${ws()}`)}${ws()}]`;
  }
  const members = Object.entries(v as Record<string, unknown>).map(([k, x]) =>
    `${str(k)}${ws()}:${ws()}${looseText(x, rand)}`
  );
  return `{${ws()}${members.join(`${ws()},${ws()}`)}${ws()}}`;
}

/** Bytes that matter to a JSON scanner: quotes, escapes, separators, brackets, number parts. */
const INTERESTING_BYTES = [
  0x22,
  0x5c,
  0x2c,
  0x3a,
  0x7b,
  0x7d,
  0x5b,
  0x5d,
  0x30,
  0x2d,
  0x2e,
  0x65,
  0x20,
];

/**
 * A copy of `bytes` with one or two bytes replaced: by a byte that matters to a JSON scanner with
 * probability `interesting`, else by any byte.
 */
export function mutated(bytes: Uint8Array, rand: () => number, interesting: number): Uint8Array {
  const out = bytes.slice();
  for (let m = 1 + Math.floor(rand() * 2); m > 0 && out.length > 0; m--) {
    const at = Math.floor(rand() * out.length);
    out[at] = rand() < interesting
      ? INTERESTING_BYTES[Math.floor(rand() * INTERESTING_BYTES.length)]
      : rand() * 256;
  }
  return out;
}

/**
 * Issue 33's preview (about 242 KB): a shift of 100 keys of 200 `*` each against 10 keys of
 * 20,000 characters. Every spec key passes the cheap prefix and suffix checks and needs a `c` that
 * no key has, so each of the 1,000 tries reads its key to the end; matching by a table of groups
 * and positions took 35 s.
 */
export function manyStarAttack(): { spec: unknown[]; input: Record<string, number> } {
  const keys: Record<string, string> = {};
  for (let i = 0; i < 100; i++) keys["*a".repeat(i) + "*c" + "*a".repeat(198 - i) + "*b"] = "out.&";
  const input: Record<string, number> = {};
  for (let j = 0; j < 10; j++) input[String(j).padEnd(19_999, "a") + "b"] = j;
  return { spec: [{ operation: "shift", spec: keys }], input };
}

/**
 * A shift the fast path covers whose work is a product: `patterns` one-star keys, none of which
 * matches, tried against each of `keys` input keys. The default, 1,000 against 12,000, is
 * 12,000,000 tries, over the 10,000,000-step budget of one run (about 150 KB as JSON).
 */
export function keyProductAttack(
  patterns = 1_000,
  keys = 12_000,
): { spec: unknown[]; input: Record<string, number> } {
  const spec: Record<string, string> = {};
  for (let i = 0; i < patterns; i++) spec[`x${i}-*`] = "out.&";
  const input: Record<string, number> = {};
  for (let j = 0; j < keys; j++) input[`k${j}`] = 0;
  return { spec: [{ operation: "shift", spec }], input };
}
