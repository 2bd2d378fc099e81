/** Tests of the shift operation: the Shiftr javadoc examples, each feature, edge cases, errors. */

import { JoltSpecError, JoltTransformError } from "../mod.ts";
import {
  assertJson,
  assertOrdered,
  assertThrows,
  fastShiftOf,
  frozen,
  run,
} from "../../../tests/support/jolt.ts";
import { compile } from "../mod.ts";

const shift = (spec: unknown, input: unknown) => run("shift", spec, input);

// ------------------------------------------------------------------------------ javadoc examples

Deno.test("shift doc: copy values to dotted output paths", () => {
  const input = { rating: { quality: { value: 3, max: 5 } } };
  const spec = {
    rating: {
      quality: {
        value: "SecondaryRatings.quality.Value",
        max: "SecondaryRatings.quality.RatingRange",
      },
    },
  };
  assertJson(shift(spec, input), { SecondaryRatings: { quality: { Value: 3, RatingRange: 5 } } });
});

Deno.test("shift doc: literal beats '*', &1 and $ (the expanded ratings example)", () => {
  const input = {
    rating: {
      primary: { value: 3, max: 5 },
      quality: { value: 3, max: 5 },
      sharpness: { value: 7, max: 10 },
    },
  };
  const spec = {
    rating: {
      primary: { value: "Rating", max: "RatingRange" },
      "*": {
        value: "SecondaryRatings.&1.Value",
        max: "SecondaryRatings.&1.Range",
        "$": "SecondaryRatings.&1.Id",
      },
    },
  };
  assertJson(shift(spec, input), {
    Rating: 3,
    RatingRange: 5,
    SecondaryRatings: {
      quality: { Range: 5, Value: 3, Id: "quality" },
      sharpness: { Range: 10, Value: 7, Id: "sharpness" },
    },
  });
});

Deno.test("shift doc: '$' makes a list of the input keys", () => {
  const input = { rating: { primary: { value: 3, max: 5 }, quality: { value: 3, max: 7 } } };
  assertJson(shift({ rating: { "*": { "$": "ratings" } } }, input), {
    ratings: ["primary", "quality"],
  });
});

Deno.test("shift doc: '#' writes a literal when a boolean value matches", () => {
  const spec = {
    hidden: {
      "true": { "#disabled": "clients.clientId" },
      "false": { "#enabled": "clients.clientId" },
    },
  };
  assertJson(shift(spec, { hidden: true }), { clients: { clientId: "disabled" } });
  assertJson(shift(spec, { hidden: false }), { clients: { clientId: "enabled" } });
});

Deno.test("shift doc: '|' matches either key", () => {
  const spec = { "rating|Rating": "rating-primary" };
  assertJson(shift(spec, { Rating: 4 }), { "rating-primary": 4 });
  assertJson(shift(spec, { rating: 2 }), { "rating-primary": 2 });
});

Deno.test("shift doc: '@' copies the value and '$' the key", () => {
  const spec = { foo: { "$": "place.to.put.key", "@": "place.to.put.value" } };
  assertJson(shift(spec, { foo: { a: 1 } }), {
    place: { to: { put: { key: "foo", value: { a: 1 } } } },
  });
});

Deno.test("shift doc: input arrays are maps with numeric keys", () => {
  const input = { Photos: ["AAA.jpg", "BBB.jpg"] };
  assertJson(shift({ Photos: { "1": "photo-&-url" } }, input), { "photo-1-url": "BBB.jpg" });
});

Deno.test("shift doc: output array indexes, literal and from '&(0,1)'", () => {
  const input = { "photo-1-id": "327704", "photo-1-url": "http://bob.com/0001/327704/photo.jpg" };
  const explicit = { "photo-1-id": "Photos[1].Id", "photo-1-url": "Photos[1].Url" };
  const expected = {
    Photos: [null, { Id: "327704", Url: "http://bob.com/0001/327704/photo.jpg" }],
  };
  assertJson(shift(explicit, input), expected);
  const computed = { "photo-*-id": "Photos[&(0,1)].Id", "photo-*-url": "Photos[&(0,1)].Url" };
  assertJson(shift(computed, input), expected);
});

Deno.test("shift doc: an array of output paths writes to each", () => {
  assertJson(shift({ foo: ["bar", "baz"] }, { foo: 3 }), { bar: 3, baz: 3 });
});

Deno.test("shift doc: two values for one path become an array", () => {
  const out = shift({ foo: "baz", tuna: "baz" }, { foo: "bar", tuna: "marlin" });
  assertJson(out, { baz: ["bar", "marlin"] });
});

// ------------------------------------------------------------------------------ wildcards

Deno.test("shift: partial '*' keys capture the starred part for &(0,1)", () => {
  const input = { "tag-Pro": "Awesome", "tag-Con": "Bogus", other: 1 };
  assertJson(shift({ "tag-*": "tags.&(0,1)" }, input), { tags: { Pro: "Awesome", Con: "Bogus" } });
});

Deno.test("shift: a star matches at least one character", () => {
  assertJson(shift({ "tag-*": "hit" }, { "tag-": 1 }), null);
});

Deno.test("shift: tuna-*-marlin style keys and two captures", () => {
  const input = { "tuna-A-marlin-AAA": { "rating-BBB": "bar" } };
  const spec = { "tuna-*-marlin-*": { "rating-*": "&(1,2).&.value" } };
  assertJson(shift(spec, input), { AAA: { "rating-BBB": { value: "bar" } } });
});

Deno.test("shift: stars are non-greedy", () => {
  const input = { "a-b-c-d": 1, "x.y.z": 2 };
  const spec = {
    "*-*": "two.&(0,1).&(0,2)",
    "*.*.*": "three.&(0,1)|&(0,2)|&(0,3)",
  };
  assertJson(shift(spec, input), { two: { a: { "b-c-d": 1 } }, three: { "x|y|z": 2 } });
});

Deno.test("shift: three-or-more star keys capture each part, shortest first", () => {
  const input = { "k_1_22_333_4444": "v" };
  assertJson(shift({ "k_*_*_*": "&(0,1)+&(0,2)+&(0,3)" }, input), { "1+22+333_4444": "v" });
});

Deno.test("shift: deep wildcards walk every level", () => {
  const input = { a: { x: { p: 1, q: 2 } }, b: { y: { r: 3 } } };
  assertJson(shift({ "*": { "*": { "*": "&2-&1-&0" } } }, input), {
    "a-x-p": 1,
    "a-x-q": 2,
    "b-y-r": 3,
  });
});

Deno.test("shift: '&' on the LHS matches the value of a key above", () => {
  const input = {
    "rating-a": { a: { match: "a-match" }, random: { match: "noise" } },
    "rating-c": { c: { match: "c-match" }, random: { match: "noise" } },
  };
  const spec = { "rating-*": { "&(0,1)": { match: "&" } } };
  assertJson(shift(spec, input), { match: ["a-match", "c-match"] });
});

Deno.test("shift: &, &0, &(0) and &(0,0) are the same reference", () => {
  const input = { top: { key: "v" } };
  for (const ref of ["&", "&0", "&(0)", "&(0,0)"]) {
    assertJson(shift({ top: { "*": `out.${ref}` } }, input), { out: { key: "v" } });
  }
  assertJson(shift({ top: { "*": "&1.&" } }, input), { top: { key: "v" } });
  assertJson(shift({ top: { "*": "&(1,0)-&(0,0)" } }, input), { "top-key": "v" });
});

Deno.test("shift: $N and $(N,M) put keys and key parts in the output", () => {
  const input = { "item-42": { name: { first: "Ada" } } };
  const spec = {
    "item-*": { name: { first: { "$1": "key1", "$(2,1)": "id", "$": "self" } } },
  };
  assertJson(shift(spec, input), { key1: "name", id: "42", self: "first" });
});

Deno.test("shift: '@' on the LHS with '$' writes key/value pairs", () => {
  const input = { colors: { red: "#f00", blue: "#00f" } };
  const spec = { colors: { "*": { "$": "list[#2].name", "@": "list[#2].value" } } };
  assertJson(shift(spec, input), {
    list: [{ name: "red", value: "#f00" }, { name: "blue", value: "#00f" }],
  });
});

Deno.test("shift: @(N,path) on the LHS uses a looked-up value as the data", () => {
  const input = { people: [{ id: "p1", name: "Ann" }, { id: "p2", name: "Bob" }] };
  const spec = { people: { "*": { "@(0,name)": "names.@(1,id)", "@id": "ids[]" } } };
  assertJson(shift(spec, input), { names: { p1: "Ann", p2: "Bob" }, ids: ["p1", "p2"] });
  // "@name" is sugar for "@(0,name)": both in one spec are a duplicate key.
  assertThrows(
    () => compile([{ operation: "shift", spec: { "@name": "a", "@(0,name)": "b" } }]),
    JoltSpecError,
    /duplicate/,
  );
});

Deno.test("shift: @ on the LHS with children transposes the input", () => {
  const input = { author: "Stephen Hawking", book: "A Brief History of Time" };
  assertJson(shift({ "@author": "@book" }, input), {
    "A Brief History of Time": "Stephen Hawking",
  });
  const spec = { "@(0,book)": { "*": { "$": "title" } } };
  assertJson(shift(spec, input), { title: "A Brief History of Time" });
});

Deno.test("shift: @ on the RHS coerces numbers and booleans into keys", () => {
  const input = { data: { id: 1234.9, flag: true, v: "x", obj: { a: 1 } } };
  const spec = {
    data: { v: ["byId.@(1,id)", "byFlag.@(1,flag)", "byObj.@(1,obj)"] },
  };
  // An object cannot be a key: that write is skipped.
  assertJson(shift(spec, input), { byId: { "1234": "x" }, byFlag: { "true": "x" } });
});

Deno.test("shift: @ on the RHS can index arrays, [@(N,path)] too", () => {
  const input = { idx: 1, value: "v", list: ["a", "b"] };
  const spec = { value: ["out[@(1,idx)]", "pick.@(1,list[1])"] };
  assertJson(shift(spec, input), { out: [null, "v"], pick: { b: "v" } });
});

Deno.test("shift: '#' keys on the LHS, with and without parens", () => {
  const input = { a: 1 };
  const spec = { a: { "#constant": "k1", "#(x.y)": "k2" } };
  assertJson(shift(spec, input), { k1: "constant", k2: "x.y" });
});

Deno.test("shift: a '#' literal at the top level writes even for empty input", () => {
  assertJson(shift({ "#v1": "version" }, {}), { version: "v1" });
});

// ------------------------------------------------------------------------------ output arrays

Deno.test("shift: [] appends, [&N] indexes by a key, [#N] counts matches", () => {
  const input = { m: { b: "B", a: "A" }, l: ["x", "y"] };
  const spec = {
    // [#1]: matches completed so far under "m" (0 for "b", 1 for "a").
    // [#2]: matches completed under the root, still 0 while "m" is being walked.
    m: { "*": ["appended[]", "counted[#1]", "root[#2]"] },
    l: { "*": "indexed[&0]" },
  };
  assertJson(shift(spec, input), {
    appended: ["B", "A"],
    counted: ["B", "A"],
    root: [["B", "A"]],
    indexed: ["x", "y"],
  });
});

Deno.test("shift: [#N] turns a map of objects into a list", () => {
  const input = { people: { p1: { name: "A", age: 1 }, p2: { name: "B", age: 2 } } };
  const spec = { people: { "*": { name: "out[#2].name", age: "out[#2].age", "$": "out[#2].id" } } };
  assertJson(shift(spec, input), {
    out: [{ id: "p1", name: "A", age: 1 }, { id: "p2", name: "B", age: 2 }],
  });
});

Deno.test("shift: a[0].b style paths create arrays of objects", () => {
  assertJson(shift({ x: "a[1].b", y: "a[1].c" }, { x: 1, y: 2 }), { a: [null, { b: 1, c: 2 }] });
});

Deno.test("shift: [] in the middle of a path adds an element per write", () => {
  assertJson(shift({ x: "a[].v", y: "a[].v" }, { x: 1, y: 2 }), { a: [{ v: 1 }, { v: 2 }] });
});

Deno.test("shift: an index reference that is not a number skips the write", () => {
  assertJson(shift({ "*": "out[&0]" }, { abc: 1, "2": 2 }), { out: [null, null, 2] });
});

// ------------------------------------------------------------------------------ conflicts

Deno.test("shift: a third value appends to the array made by the second", () => {
  const out = shift({ a: "x", b: "x", c: "x" }, { a: 1, b: 2, c: 3 });
  assertJson(out, { x: [1, 2, 3] });
});

Deno.test("shift: a list already at the path is extended, input list untouched", () => {
  const input = frozen({ a: [1, 2], b: 3 });
  const out = compile([{ operation: "shift", spec: { a: "x", b: "x" } }]).apply(input);
  assertJson(out, { x: [1, 2, 3] });
  assertJson(input, { a: [1, 2], b: 3 });
});

Deno.test("shift: null then a value: the value replaces the null", () => {
  assertJson(shift({ a: "x", b: "x" }, { a: null, b: 2 }), { x: 2 });
  assertJson(shift({ a: "x", b: "x" }, { a: 2, b: null }), { x: [2, null] });
});

Deno.test("shift: writing below data copied from the input copies it first", () => {
  const input = frozen({ obj: { a: 1 }, extra: 2 });
  const out = compile([{ operation: "shift", spec: { obj: "o", extra: "o.b" } }]).apply(input);
  assertJson(out, { o: { a: 1, b: 2 } });
  assertJson(input, { obj: { a: 1 }, extra: 2 });
});

Deno.test("shift: a write that clashes with the type already there is dropped", () => {
  assertJson(shift({ a: "x", b: "x.y" }, { a: "scalar", b: 2 }), { x: "scalar" });
  assertJson(shift({ a: "x", b: "x[0]" }, { a: { k: 1 }, b: 2 }), { x: { k: 1 } });
});

// ------------------------------------------------------------------------------ precedence

Deno.test("shift: literal keys win over computed ones", () => {
  const spec = { rating: "literal", "r*": "star", "&": "amp" };
  assertJson(shift(spec, { rating: 1, rx: 2 }), { literal: 1, star: 2 });
});

Deno.test("shift: '&' keys are tried before '*' keys", () => {
  // On the LHS, "&" is the parent's key (the key being matched is not on the path yet).
  const input = { k: { k: 1, other: 2 } };
  assertJson(shift({ "*": { "&": "amp", "*": "star" } }, input), { amp: 1, star: 2 });
});

Deno.test("shift: more stars first, then longer keys, then alphabetical", () => {
  const input = { "a-b-c": 1, "a-bc": 2, "abc": 3 };
  const spec = { "*": "all", "a-*": "one", "a-*-*": "two", "a*": "short" };
  assertJson(shift(spec, input), { two: 1, one: 2, short: 3 });
  // Same length and star count: alphabetical order of the keys decides.
  assertJson(shift({ "*b": "first", "a*": "second" }, { ab: 1 }), { first: 1 });
});

Deno.test("shift: '@', '$' and '#' always run and never block other keys", () => {
  const spec = { a: { "@": "copy", "$": "key", "#lit": "hash", "*": "rest.&" } };
  assertJson(shift(spec, { a: { x: 1 } }), {
    copy: { x: 1 },
    key: "a",
    hash: "lit",
    rest: { x: 1 },
  });
});

// ------------------------------------------------------------------------------ escapes

Deno.test("shift: escaped special characters on the LHS are literal", () => {
  const input = { "@context": "c", "$id": "i", "a.b": 1, "*": "star", "#hash": "h" };
  const spec = {
    "\\@context": "context",
    "\\$id": "id",
    "a.b": "dotted",
    "\\*": "star",
    "\\#hash": "hash",
  };
  assertJson(shift(spec, input), { context: "c", id: "i", dotted: 1, star: "star", hash: "h" });
});

Deno.test("shift: escaped characters on the RHS are literal", () => {
  const spec = { a: "x\\.y", b: "\\@type", c: "price\\$", d: "q\\[0\\]" };
  assertJson(shift(spec, { a: 1, b: 2, c: 3, d: 4 }), {
    "x.y": 1,
    "@type": 2,
    "price$": 3,
    "q[0]": 4,
  });
});

// ------------------------------------------------------------------------------ edge cases

Deno.test("shift: null values are copied; a null RHS matches but writes nothing", () => {
  const spec = { a: "out.a", b: null, "*": "rest.&" };
  assertJson(shift(spec, { a: null, b: 1, c: 2 }), { out: { a: null }, rest: { c: 2 } });
});

Deno.test("shift: nothing matched gives null; empty RHS path is the whole output", () => {
  assertJson(shift({ missing: "x" }, { a: 1 }), null);
  assertJson(shift({ "@": "" }, { a: [1, 2] }), { a: [1, 2] });
  assertJson(shift({ a: "" }, { a: 7 }), 7);
});

Deno.test("shift: missing paths and lookups write nothing", () => {
  const spec = { a: { b: { c: "x" } }, d: { "@(1,nope)": "y" }, e: "z.@(1,nope)" };
  assertJson(shift(spec, { a: { q: 1 }, d: 1, e: 2 }), null);
});

Deno.test("shift: numeric keys of objects and of arrays", () => {
  const spec = { obj: { "0": "fromObject" }, arr: { "0": "fromArray", "5": "outOfRange" } };
  assertJson(shift(spec, { obj: { "0": "o" }, arr: ["a"] }), {
    fromObject: "o",
    fromArray: "a",
  });
});

Deno.test("shift: empty arrays and objects in the input", () => {
  const spec = { list: { "*": "items[]" }, obj: { "*": "x" }, keep: "keep" };
  assertJson(shift(spec, { list: [], obj: {}, keep: [] }), { keep: [] });
});

Deno.test("shift: a scalar input is matched like a key", () => {
  assertJson(shift({ "yes": { "#1": "flag" }, "*": { "$": "other" } }, "yes"), { flag: "1" });
  assertJson(shift({ "yes": { "#1": "flag" }, "*": { "$": "other" } }, 12), { other: "12" });
  assertJson(shift({ status: { "ok": { "#up": "s" }, "*": { "$": "s" } } }, { status: "down" }), {
    s: "down",
  });
});

Deno.test("shift: a literal key matched against a scalar value writes null", () => {
  assertJson(shift({ flag: { "true": "x" } }, { flag: true }), { x: null });
});

Deno.test("shift: input objects are shared into the output, never modified", () => {
  const input = frozen({ a: { deep: [1, { z: 1 }] } });
  const out = compile([{ operation: "shift", spec: { a: "copy" } }]).apply(input) as {
    copy: unknown;
  };
  assertJson(out, { copy: { deep: [1, { z: 1 }] } });
});

Deno.test("shift: key order of the output follows the order of the writes", () => {
  assertOrdered(shift({ b: "y", a: "x" }, { a: 1, b: 2 }), { y: 2, x: 1 });
});

// ------------------------------------------------------------------------------ spec errors

Deno.test("shift spec errors: JOLT's bad specs", () => {
  const bad: unknown[] = [
    null,
    [],
    {},
    { tuna: {} },
    { "tuna-*-marlin-*": { "rating-@": "&(1,2).&.value" } },
    { "tuna-*-marlin-*": { "rating-*": "&(1,2).@.value" } },
    { "tuna-*-marlin-*": { "rating-*": "&(1,2).@(data.&(1,1).value" } },
    { "tuna-*-marlin-*": { "rating-*": "&(1,2).*.value" } },
    { "tuna-*-marlin-*": { "rating-*": "&(1,2).$.value" } },
    { "tuna-*-marlin-*": { "rating-*": ["&(1,2).photos[&(0,1)]-subArray[&(1,2)].value", "foo"] } },
    { "tuna-*-marlin-*": { "rating-&(1,2)-*": ["&(1,2).value", "foo"] } },
    { tuna: "marlin[-1]" },
  ];
  for (const spec of bad) {
    assertThrows(() => compile([{ operation: "shift", spec }]), JoltSpecError);
  }
});

Deno.test("shift spec errors: bad RHS forms", () => {
  for (
    const rhs of ["@", "a@", "@a@b", "@(a.b.&(2,2)", "@(a.b.&(2,2).d", "@(a.b.@c).d", "@(a.*.c)"]
  ) {
    assertThrows(() => compile([{ operation: "shift", spec: { k: rhs } }]), JoltSpecError);
  }
  assertThrows(() => compile([{ operation: "shift", spec: { k: 5 } }]), JoltSpecError, /RHS/);
  assertThrows(() => compile([{ operation: "shift", spec: { k: ["a", 1] } }]), JoltSpecError);
});

Deno.test("shift spec errors: bad LHS keys and references", () => {
  const bad: unknown[] = [
    { "@": { a: "b" } },
    { "$": { a: "b" } },
    { "a@b": "x" },
    { "#": "x" },
    { "a#b": "x" },
    { "&(1,2,3)": "x" },
    { "&y": "x", "&(0,0)y": "z" },
    { "$(1": "x" },
    { "[0]": "x" },
    { "a|a": "x" },
    { "&": "x", "&0": "y" },
    { "**": "x" },
  ];
  for (const spec of bad) {
    assertThrows(() => compile([{ operation: "shift", spec }]), JoltSpecError);
  }
});

Deno.test("shift spec errors: references that can never resolve", () => {
  // At depth 2 the walked path is [root, root, a, b]: &3 is the top "root", &4 is too far.
  compile([{ operation: "shift", spec: { a: "&1.&0" } }]);
  compile([{ operation: "shift", spec: { a: { b: "&3" } } }]);
  assertThrows(
    () => compile([{ operation: "shift", spec: { a: { b: "&4" } } }]),
    JoltSpecError,
    /goes 4 levels up, but only 3 exist/,
  );
  assertThrows(
    () => compile([{ operation: "shift", spec: { a: { "@(3,x)": "y" } } }]),
    JoltSpecError,
    /levels up/,
  );
  // "*" captures no parts, so &(0,1) has nothing to refer to.
  assertThrows(
    () => compile([{ operation: "shift", spec: { "*": "&(0,1)" } }]),
    JoltSpecError,
    /key part 1/,
  );
});

Deno.test("shift spec errors carry the operation index, spec path and reason", () => {
  const err = assertThrows(
    () =>
      compile([
        { operation: "sort" },
        { operation: "shift", spec: { rating: { "*": { value: "a.*.b" } } } },
      ]),
    JoltSpecError,
  );
  assertJson(err.operationIndex, 1);
  assertJson(err.path, ["rating", "*", "value"]);
  assertJson(err.reason.includes("'*'"), true);
  assertJson(err.message.includes('["rating","*","value"]'), true);
  assertJson(err.message.includes("operation 1 (shift)"), true);
});

Deno.test("shift: an output index taken from the data is bounded (MAX_SHIFT_INDEX)", () => {
  const spec = { "*": "out[&]", "rows": { "*": { "@": "byPos[@(1,pos)]" } } };
  const chain = compile([{ operation: "shift", spec }]);
  // At the limit: written, with the nulls before it.
  const atLimit = chain.apply({ "01000000": "last" }) as { out: unknown[] };
  assertJson([atLimit.out.length, atLimit.out[1_000_000], atLimit.out[999_999]], [
    1_000_001,
    "last",
    null,
  ]);
  // Past it, from a key or from a value: an error naming the limit, on every path.
  const bodies = ['{"02000000000":1}', '{"rows":[{"pos":"1000001"}]}'];
  for (const body of bodies) {
    assertThrows(
      () => chain.apply(JSON.parse(body)),
      JoltTransformError,
      /index \d+ is over the limit of 1000000/,
    );
    const bytes = new TextEncoder().encode(body);
    assertThrows(() => chain.applyJson(bytes), Error, /over the limit of 1000000/);
    assertThrows(
      () => fastShiftOf(spec)!.run(bytes),
      Error,
      /over the limit of 1000000/,
    );
  }
});

Deno.test("shift: the nulls padded into output arrays are bounded per run, across arrays", () => {
  const spec = { "*": { "*": "out.&1[&]" } };
  const chain = compile([{ operation: "shift", spec }]);
  const body = (arrays: number) =>
    JSON.stringify(
      Object.fromEntries(Array.from({ length: arrays }, (_, i) => [`a${i}`, { "02000": i }])),
    );
  // 400 arrays of 2001: 800,000 nulls, within the budget (and a later run starts afresh).
  for (let run = 0; run < 2; run++) {
    const out = chain.apply(JSON.parse(body(400))) as { out: Record<string, unknown[]> };
    assertJson([Object.keys(out.out).length, out.out.a399.length, out.out.a399[2000]], [
      400,
      2001,
      399,
    ]);
  }
  // 600 of them: 1,200,000 nulls, over it, on every path.
  const bytes = new TextEncoder().encode(body(600));
  assertThrows(
    () => chain.apply(JSON.parse(body(600))),
    JoltTransformError,
    /more than 1000000 values \(nulls padding arrays/,
  );
  assertThrows(
    () => chain.applyJson(bytes),
    Error,
    /more than 1000000 values \(nulls padding arrays/,
  );
  assertThrows(
    () => fastShiftOf(spec)!.run(bytes),
    Error,
    /more than 1000000 values \(nulls padding arrays/,
  );
});
