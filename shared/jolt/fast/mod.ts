/**
 * The JOLT fast path: a lone shift compiled to JavaScript that reads the body's JSON bytes
 * through a tape and writes the output's bytes, with no parse and no stringify. One entry,
 * {@link FastShift}: `compile` declines (null) a spec it does not cover and `run` declines (null)
 * a body it must not take; the caller then parses and runs the reference engine (`../engine/`),
 * which gives the same bytes.
 *
 * @example
 * ```ts
 * import { compileChain } from "../engine/mod.ts";
 * import { FastShift } from "./mod.ts";
 *
 * const root = compileChain([{ operation: "shift", spec: { a: "b" } }]).loneShift!;
 * const out = FastShift.compile(root)!.run(new TextEncoder().encode('{"a": 1}'));
 * if (new TextDecoder().decode(out!) !== '{"b":1}') throw new Error("fast shift");
 * ```
 *
 * @module
 */

export { FastShift } from "./fast_shift.ts";
export { scanJson, ScanScratch } from "./raw_json.ts";
