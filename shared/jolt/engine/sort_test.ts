/** Tests of the sort operation: recursive key order with JOLT's '~' rule. */

import { assertJson, assertOrdered, frozen, run } from "../../../tests/support/jolt.ts";
import { compile } from "../mod.ts";
import { compareSortKeys } from "./sort.ts";

Deno.test("sort: keys in String.compareTo order, '~' keys first, recursively", () => {
  const input = {
    zeta: 1,
    "~tilde": { b: 1, a: 2 },
    Alpha: [{ y: 1, x: 2 }, "s"],
    alpha: null,
    "-dash": true,
  };
  assertOrdered(run("sort", undefined, input), {
    "~tilde": { a: 2, b: 1 },
    "-dash": true,
    Alpha: [{ x: 2, y: 1 }, "s"],
    alpha: null,
    zeta: 1,
  });
});

Deno.test("sort: the '~' rule only looks at the first character", () => {
  const keys = ["b", "~b", "a~", "~a", "~", ""];
  assertJson(keys.sort(compareSortKeys), ["~", "~a", "~b", "", "a~", "b"]);
});

Deno.test("sort: arrays keep their order; scalars pass through", () => {
  assertOrdered(run("sort", undefined, [3, 1, { b: 0, a: 0 }]), [3, 1, { a: 0, b: 0 }]);
  assertJson(run("sort", undefined, "x"), "x");
  assertJson(run("sort", undefined, null), null);
});

Deno.test("sort: returns a copy, input untouched; a spec is optional", () => {
  const input = frozen({ b: { d: 1, c: 2 }, a: 1 });
  const out = compile([{ operation: "sort", spec: "ignored" }]).apply(input);
  assertOrdered(out, { a: 1, b: { c: 2, d: 1 } });
  assertOrdered(input, { b: { d: 1, c: 2 }, a: 1 });
});
