/** The size bound of the fast path's generated program: wide specs run on the walker. */
import { assert, assertEquals } from "../../../tests/assert.ts";
import { compile } from "../mod.ts";
import { fastShiftOf } from "../../../tests/support/jolt.ts";
import { FAST_PROGRAM_MAX_SOURCE } from "./shift_program.ts";

/** A shift of `n` literal keys under `*`. */
function wide(n: number): Record<string, unknown> {
  return { "*": Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, `out.k${i}`])) };
}

Deno.test("fast path: a spec whose program would pass the size bound runs on the walker", () => {
  // 100 keys compile (the bound is above them); 2,000 keys (about 3.5 MB of code, 1.25 GB of RSS
  // in V8 against 5,000 objects) do not.
  assert(fastShiftOf(wide(100)) !== null);
  assertEquals(fastShiftOf(wide(2_000)), null);
  assert(FAST_PROGRAM_MAX_SOURCE < 2_000 * 1_000);
  // Declined means parsed and walked, with the same output.
  const chain = compile([{ operation: "shift", spec: wide(2_000) }]);
  const input = { a: { k7: 1, k1999: 2 }, b: { k7: 3 } };
  assertEquals(chain.applyJson(new TextEncoder().encode(JSON.stringify(input))), null);
  assertEquals(chain.apply(input), { out: { k7: [1, 3], k1999: 2 } });
});
