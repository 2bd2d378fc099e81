/** Tests of the modify operations: flavours, prefixes, lookups, arrays, lists of RHS, errors. */

import { JoltSpecError } from "../mod.ts";
import { assertJson, assertThrows, frozen, run } from "../../../tests/support/jolt.ts";
import { compile } from "../mod.ts";

const overwrite = (spec: unknown, input: unknown, ctx?: Record<string, unknown>) =>
  run("modify-overwrite-beta", spec, input, ctx);
const defaultr = (spec: unknown, input: unknown) => run("modify-default-beta", spec, input);
const define = (spec: unknown, input: unknown) => run("modify-define-beta", spec, input);

// ------------------------------------------------------------------------------ javadoc examples

Deno.test("modify doc: '=abs(@(1,&0))' and the '=abs' shortcut", () => {
  assertJson(overwrite({ num: "=abs(@(1,&0))" }, { num: -1.5 }), { num: 1.5 });
  assertJson(overwrite({ num: "=abs" }, { num: -1.5 }), { num: 1.5 });
});

Deno.test("modify doc: a function of another key's value", () => {
  assertJson(overwrite({ absValue: "=abs(@(1,value))" }, { value: -1.5 }), {
    value: -1.5,
    absValue: 1.5,
  });
});

Deno.test("modify doc: a function that fails writes nothing", () => {
  assertJson(overwrite({ value1: "=abs", value2: "=abs" }, { value1: "xyz" }), { value1: "xyz" });
});

Deno.test('modify doc: ["=isPresent", "otherValue"] and friends', () => {
  const spec = { key: ["=isPresent", "otherValue"] };
  assertJson(overwrite(spec, { key: null }), { key: null });
  assertJson(overwrite(spec, { key: "value" }), { key: "value" });
  assertJson(overwrite(spec, {}), { key: "otherValue" });
  const notNull = { key: ["=notNull", "otherValue"] };
  assertJson(overwrite(notNull, { key: null }), { key: "otherValue" });
  assertJson(overwrite(notNull, { key: "value" }), { key: "value" });
  const isNull = { key: ["=isNull", "otherValue"] };
  assertJson(overwrite(isNull, { key: null }), { key: null });
  assertJson(overwrite(isNull, { key: "value" }), { key: "otherValue" });
});

// ------------------------------------------------------------------------------ flavours

Deno.test("modify: overwrite, default and define on missing, null and set values", () => {
  const spec = { missing: "new", nulled: "new", set: "new" };
  const input = { nulled: null, set: "old" };
  assertJson(overwrite(spec, input), { nulled: "new", set: "new", missing: "new" });
  assertJson(defaultr(spec, input), { nulled: "new", set: "old", missing: "new" });
  assertJson(define(spec, input), { nulled: null, set: "old", missing: "new" });
});

Deno.test("modify: '+', '~' and '_' prefixes switch the flavour per key", () => {
  const input = { a: "old", b: null, c: "old" };
  assertJson(define({ "+a": "new", "~b": "new", "_c": "new" }, input), {
    a: "new",
    b: "new",
    c: "old",
  });
  // The prefix also decides whether a missing parent object is created.
  assertJson(define({ "_x": { y: 1 }, "+b": { y: 1 } }, { b: null }), { x: { y: 1 }, b: { y: 1 } });
  // It is not inherited: keys below keep the operation's flavour.
  assertJson(define({ "+b": { y: 1, z: 2 } }, { b: { y: 0 } }), { b: { y: 0, z: 2 } });
  assertJson(overwrite({ "_b": { y: 1 } }, { b: { y: 0 } }), { b: { y: 1 } });
});

Deno.test("modify: a '?' suffix only applies when the key exists", () => {
  const spec = { "present?": "new", "absent?": "new", "nulled?": "new" };
  assertJson(overwrite(spec, { present: 1, nulled: null }), { present: "new", nulled: "new" });
  // An escaped '?' is part of the key.
  assertJson(overwrite({ "what\\?": 1 }, {}), { "what?": 1 });
});

Deno.test("modify: missing objects are created on the way down (overwrite/default)", () => {
  assertJson(overwrite({ a: { b: { c: 1 } } }, {}), { a: { b: { c: 1 } } });
  assertJson(defaultr({ a: { b: 1 } }, { a: null }), { a: { b: 1 } });
  assertJson(define({ a: { b: 1 } }, { a: null }), { a: null });
  assertJson(overwrite({ a: { b: 1 } }, { a: "scalar" }), { a: "scalar" });
});

// ------------------------------------------------------------------------------ right-hand sides

Deno.test("modify: literal right-hand sides of every JSON type", () => {
  const spec = { s: "text", n: 1.5, b: false, z: null, l: [], o: {}, q: "'quoted'" };
  assertJson(overwrite(spec, {}), {
    s: "text",
    n: 1.5,
    b: false,
    z: null,
    l: [],
    o: {},
    q: "'quoted'",
  });
});

Deno.test("modify: lookups with @(N,path) relative to the key and above", () => {
  const input = { id: "x1", inner: { name: "n", deep: { v: 7 } } };
  const spec = { inner: { copyId: "@(2,id)", name2: "@(1,name)", v: "@(1,deep.v)", self: "@(0)" } };
  assertJson(overwrite(spec, input), {
    id: "x1",
    inner: { name: "n", deep: { v: 7 }, copyId: "x1", name2: "n", v: 7, self: null },
  });
});

Deno.test("modify: '^path' reads the context, '^' the whole context", () => {
  const ctx = { photo: { label: "thumb" }, n: 2 };
  assertJson(overwrite({ label: "^photo.label", all: "^", missing: "^nope" }, {}, ctx), {
    label: "thumb",
    all: ctx,
  });
  assertJson(overwrite({ x: "=intSum(^n, 3)" }, {}, ctx), { x: 5 });
});

Deno.test("modify: a list of right-hand sides takes the first that yields a value", () => {
  const spec = { a: ["=toInteger", "@(1,fallback)", 0], b: ["=toInteger", "@(1,nothing)", 0] };
  assertJson(overwrite(spec, { a: "x", b: "y", fallback: 9 }), { a: 9, b: 0, fallback: 9 });
});

Deno.test("modify: function arguments: quotes, commas, numbers, booleans, empty", () => {
  const spec = {
    a: "=concat('a,b', '(x)', 1, true, , 'end')",
    b: "=concat()",
    c: "=toList(TRUE, 2.5, abc)",
  };
  assertJson(overwrite(spec, {}), { a: "a,b(x)1trueend", c: [true, 2.5, "abc"] });
});

Deno.test("modify: a missing argument is passed as null to multi-argument functions", () => {
  assertJson(overwrite({ x: "=toList(@(1,nope), 1)" }, {}), { x: [null, 1] });
  // A single missing argument means "called with no arguments".
  assertJson(overwrite({ x: "=toList(@(1,nope))" }, {}), {});
});

// ------------------------------------------------------------------------------ arrays and stars

Deno.test("modify: [n] keys address array elements, expanding the array", () => {
  assertJson(overwrite({ list: { "[1]": "b", "[3]": "d" } }, { list: ["a"] }), {
    list: ["a", "b", null, "d"],
  });
  assertJson(overwrite({ list: { "[1]": "b" } }, {}), { list: [null, "b"] });
  // "[n]?" does not expand the array.
  assertJson(overwrite({ list: { "[5]?": "x", "[0]?": "y" } }, { list: ["a"] }), { list: ["y"] });
});

Deno.test("modify: define writes only into array slots that did not exist", () => {
  assertJson(define({ list: { "[0]": "x", "[2]": "z" } }, { list: [null] }), {
    list: [null, null, "z"],
  });
  assertJson(defaultr({ list: { "[0]": "x", "[2]": "z" } }, { list: [null, 1] }), {
    list: ["x", 1, "z"],
  });
});

Deno.test("modify: '*' applies to every key or element; literals and '*' both apply", () => {
  assertJson(overwrite({ "*": "=toUpper" }, { a: "x", b: "y", n: 1 }), { a: "X", b: "Y", n: 1 });
  assertJson(overwrite({ list: { "*": "=toString" } }, { list: [1, true] }), {
    list: ["1", "true"],
  });
  assertJson(overwrite({ a: "=toUpper", "*": "=concat(@(1,&0),'!')" }, { a: "x", b: "y" }), {
    a: "X!",
    b: "y!",
  });
});

Deno.test("modify: star patterns, '|' keys and &-references in lookups", () => {
  const input = { "price-eu": "10", "price-us": "12", other: "1" };
  assertJson(overwrite({ "price-*": "=toInteger" }, input), {
    "price-eu": 10,
    "price-us": 12,
    other: "1",
  });
  assertJson(overwrite({ "a|b": "=toUpper" }, { a: "x", b: "y", c: "z" }), {
    a: "X",
    b: "Y",
    c: "z",
  });
  // From "name": &1 is the user key, @(3,…) starts at the document root.
  const input2 = { names: { u1: "Ann" }, users: { u1: { age: 3 }, u2: {} } };
  assertJson(overwrite({ users: { "*": { name: "@(3,names.&1)" } } }, input2), {
    names: { u1: "Ann" },
    users: { u1: { age: 3, name: "Ann" }, u2: {} },
  });
});

Deno.test("modify: escaped keys are literal", () => {
  assertJson(overwrite({ "\\@type": "Patient" }, {}), { "@type": "Patient" });
});

Deno.test("modify: edits are copies, the input stays as it was", () => {
  const input = frozen({ a: { b: [1, { c: "x" }] }, untouched: { big: [1] } });
  const out = compile([{
    operation: "modify-overwrite-beta",
    spec: { a: { b: { "[1]": { c: "=toUpper" } } } },
  }])
    .apply(input) as Record<string, unknown>;
  assertJson(out, { a: { b: [1, { c: "X" }] }, untouched: { big: [1] } });
  assertJson(out.untouched === input.untouched, true);
  assertJson(input.a, { b: [1, { c: "x" }] });
});

Deno.test("modify: a non-object input is returned unchanged", () => {
  assertJson(overwrite({ a: 1 }, "text"), "text");
  assertJson(overwrite({ a: 1 }, null), null);
  assertJson(overwrite({ "*": "=toUpper" }, ["a", "b"]), ["A", "B"]);
});

// ------------------------------------------------------------------------------ spec errors

Deno.test("modify spec errors", () => {
  const bad: unknown[] = [
    { a: "=noSuchFunction" },
    { a: "=noSuchFunction(1)" },
    { a: "=abs(" },
    { "&": "x" },
    { "@": "x" },
    { "$": "x" },
    { "#x": "x" },
    { "@(1,a)": "x" },
    { list: { "[0]": 1, a: 2 } },
    { list: { "[&1]": 1 } },
    { a: "=concat(@a.b)" },
    { a: "=concat(')" },
    { "": 1 },
    { "a|a": 1 },
    [],
  ];
  for (const spec of bad) {
    assertThrows(() => compile([{ operation: "modify-overwrite-beta", spec }]), JoltSpecError);
  }
  const err = assertThrows(
    () => compile([{ operation: "modify-default-beta", spec: { a: { b: "=nope" } } }]),
    JoltSpecError,
    /unknown function "nope"/,
  );
  assertJson(err.path, ["a", "b"]);
});

Deno.test("modify: in a list, an unknown function is skipped and the next entry applies (as JOLT does)", () => {
  const chain = compile([
    { operation: "modify-default-beta", spec: { a: { b: ["=nope", "=toUpper(@(1,c))", "x"] } } },
  ]);
  assertJson(chain.apply({ a: { c: "low" } }), { a: { c: "low", b: "LOW" } });
  const fallback = compile([{ operation: "modify-default-beta", spec: { b: ["=nope(1)", "x"] } }]);
  assertJson(fallback.apply({}), { b: "x" });
});
