/** Tests of the cardinality operation: the javadoc examples, ONE/MANY table, '@' and '*'. */

import { JoltSpecError } from "../mod.ts";
import { assertJson, assertOrdered, assertThrows, run } from "../../../tests/support/jolt.ts";
import { compile } from "../mod.ts";

const card = (spec: unknown, input: unknown) => run("cardinality", spec, input);

Deno.test("cardinality doc: ONE takes the first element of a list", () => {
  assertJson(card({ review: { rating: "ONE" } }, { review: { rating: [5, 4] } }), {
    review: { rating: 5 },
  });
});

Deno.test("cardinality doc: '*' applies to every element", () => {
  const input = {
    photosArray: [
      {
        url: ["http://pants.com/123-normal.jpg", "http://pants.com/123-thumbnail.jpg"],
        caption: "Nice pants",
      },
      {
        url: ["http://pants.com/123-thumbnail.jpg", "http://pants.com/123-normal.jpg"],
        caption: "Nice pants",
      },
    ],
  };
  assertJson(card({ photosArray: { "*": { url: "ONE" } } }, input), {
    photosArray: [
      { url: "http://pants.com/123-normal.jpg", caption: "Nice pants" },
      { url: "http://pants.com/123-thumbnail.jpg", caption: "Nice pants" },
    ],
  });
});

Deno.test("cardinality doc: '@' changes the parent, then its children apply", () => {
  const input = { views: [{ count: 1024 }, { count: 2048 }] };
  assertJson(card({ views: { "@": "ONE", count: "MANY" } }, input), { views: { count: [1024] } });
});

Deno.test("cardinality: the ONE / MANY table", () => {
  const input = { s: "x", n: 1, b: true, m: { k: 1 }, l: [1, 2], e: [], z: null };
  assertJson(
    card({ s: "ONE", n: "ONE", b: "ONE", m: "ONE", l: "ONE", e: "ONE", z: "ONE" }, input),
    {
      s: "x",
      n: 1,
      b: true,
      m: { k: 1 },
      l: 1,
      e: null,
      z: null,
    },
  );
  assertJson(
    card({ s: "MANY", n: "MANY", b: "MANY", m: "MANY", l: "MANY", e: "MANY", z: "MANY" }, input),
    {
      s: ["x"],
      n: [1],
      b: [true],
      m: [{ k: 1 }],
      l: [1, 2],
      e: [],
      z: [],
    },
  );
});

Deno.test("cardinality: MANY moves a wrapped key to the end, as JOLT does", () => {
  assertOrdered(card({ a: "MANY" }, { a: 1, b: 2 }), { b: 2, a: [1] });
  assertOrdered(card({ a: "MANY" }, { a: null, b: 2 }), { a: [], b: 2 });
});

Deno.test("cardinality: '@' ONE on something that is not a list skips the children", () => {
  // JOLT quirk: the '@' step returns nothing, so the children see no input.
  assertJson(card({ v: { "@": "ONE", c: "MANY" } }, { v: { c: 1 } }), { v: { c: 1 } });
  assertJson(card({ v: { "@": "MANY", "0": { c: "MANY" } } }, { v: { c: 1 } }), {
    v: [{ c: [1] }],
  });
});

Deno.test("cardinality: star patterns, literal precedence, missing keys", () => {
  const input = { "tag-a": [1, 2], "tag-b": 3, tag: [9, 8] };
  assertJson(card({ "tag-*": "ONE", tag: "MANY", missing: "ONE" }, input), {
    "tag-a": 1,
    "tag-b": 3,
    tag: [9, 8],
  });
});

Deno.test("cardinality: elements of arrays can be changed by index or '*'", () => {
  assertJson(card({ l: { "*": "MANY" } }, { l: [1, [2]] }), { l: [[1], [2]] });
  assertJson(card({ l: { "1": "ONE" } }, { l: [[1], [2, 3]] }), { l: [[1], 2] });
});

Deno.test("cardinality: '@' at the top level changes the whole document", () => {
  assertJson(card({ "@": "MANY" }, { a: 1 }), [{ a: 1 }]);
});

Deno.test("cardinality spec errors", () => {
  const bad: unknown[] = [{ a: "SOME" }, { a: 1 }, { a: null }, { "@": { a: "ONE" } }, { a: {} }, {
    "x@": "ONE",
  }, []];
  for (const spec of bad) {
    assertThrows(() => compile([{ operation: "cardinality", spec }]), JoltSpecError);
  }
});
