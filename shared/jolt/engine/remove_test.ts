/** Tests of the remove operation: the Removr javadoc examples, wildcards and arrays. */

import { JoltSpecError } from "../mod.ts";
import { assertJson, assertThrows, frozen, run } from "../../../tests/support/jolt.ts";
import { compile } from "../mod.ts";

const remove = (spec: unknown, input: unknown) => run("remove", spec, input);

Deno.test("remove doc: literal keys and nested objects", () => {
  const input = {
    "~emVersion": "2",
    id: "123124",
    productId: "31231231",
    submissionId: "34343",
    this: "stays",
    configured: { a: "b", c: "d" },
  };
  const spec = { "~emVersion": "", productId: "", submissionId: "", configured: { c: "" } };
  assertJson(remove(spec, input), { id: "123124", this: "stays", configured: { a: "b" } });
});

Deno.test("remove doc: '*' walks every child", () => {
  const input = { ratings: { Set1: { a: "a", b: "b" }, Set2: { c: "c", b: "b" } } };
  assertJson(remove({ ratings: { "*": { b: "" } } }, input), {
    ratings: { Set1: { a: "a" }, Set2: { c: "c" } },
  });
});

Deno.test("remove doc: prefixed keys with 'ratings_*'", () => {
  const sets = { Set1: { a: "a", b: "b" }, Set2: { a: "a", b: "b" } };
  const input = { ratings_legacy: sets, ratings_new: sets, other: sets };
  assertJson(remove({ "ratings_*": { Set1: "" } }, input), {
    ratings_legacy: { Set2: { a: "a", b: "b" } },
    ratings_new: { Set2: { a: "a", b: "b" } },
    other: sets,
  });
});

Deno.test("remove doc: array indexes are removed from the highest down", () => {
  assertJson(remove({ array: { "0": "", "2": "" } }, { array: ["a", "b", "c", "d"] }), {
    array: ["b", "d"],
  });
});

Deno.test("remove: '|', multi-star patterns and '*' leaves", () => {
  const input = { a: 1, b: 2, "x-1-y": 3, "x-2-y": 4, keep: 5, all: { p: 1, q: 2 } };
  assertJson(remove({ "a|b": "", "x-*-*": "", all: { "*": "" } }, input), { keep: 5, all: {} });
});

Deno.test("remove: inside arrays of objects, and '*' on an array empties it", () => {
  const input = { list: [{ a: 1, b: 2 }, { a: 3, b: 4 }], gone: [1, 2, 3] };
  assertJson(remove({ list: { "*": { b: "" } }, gone: { "*": "" } }, input), {
    list: [{ a: 1 }, { a: 3 }],
    gone: [],
  });
});

Deno.test("remove: patterns other than '*' do not apply to arrays; missing keys are fine", () => {
  const input = { list: ["a", "b"], x: 1 };
  assertJson(remove({ list: { "a*": "", "9": "" }, nope: "", x: { y: "" } }, input), input);
});

Deno.test("remove: a top-level array", () => {
  assertJson(remove({ "*": { secret: "" } }, [{ secret: 1, ok: 2 }]), [{ ok: 2 }]);
});

Deno.test("remove: untouched parts are shared, the input stays as it was", () => {
  const input = frozen({ a: { big: [1, 2] }, b: { x: 1, y: 2 } });
  const out = compile([{ operation: "remove", spec: { b: { x: "" } } }]).apply(input) as Record<
    string,
    unknown
  >;
  assertJson(out, { a: { big: [1, 2] }, b: { y: 2 } });
  assertJson(out.a === input.a, true);
  assertJson(input.b, { x: 1, y: 2 });
});

Deno.test('remove spec errors: values must be "" or an object', () => {
  for (const spec of [{ a: "x" }, { a: 1 }, { a: null }, { a: [] }, "x"]) {
    assertThrows(() => compile([{ operation: "remove", spec }]), JoltSpecError);
  }
  compile([{ operation: "remove", spec: { a: "  " } }]); // blank is fine, as in JOLT
});
