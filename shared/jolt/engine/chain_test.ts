/** Tests of chains: compiling, errors with their location, apply order, context, purity. */

import { strictEqual } from "node:assert";
import { compile, JoltSpecError, parseSpec } from "../mod.ts";
import { assertJson, assertThrows, frozen } from "../../../tests/support/jolt.ts";

Deno.test("chain: operations run in order and see the previous output", () => {
  const spec = compile([
    { operation: "shift", spec: { name: "user.name", tags: "user.tags" } },
    {
      operation: "modify-overwrite-beta",
      spec: { user: { name: "=toUpper", count: "=size(@(1,tags))" } },
    },
    { operation: "default", spec: { user: { role: "guest" } } },
    { operation: "remove", spec: { user: { tags: "" } } },
    { operation: "cardinality", spec: { user: { name: "MANY" } } },
    { operation: "sort" },
  ]);
  assertJson(spec.operations, [
    "shift",
    "modify-overwrite-beta",
    "default",
    "remove",
    "cardinality",
    "sort",
  ]);
  const input = frozen({ name: "ann", tags: ["a", "b"] });
  assertJson(spec.apply(input), { user: { count: 2, name: ["ANN"], role: "guest" } });
  assertJson(input, { name: "ann", tags: ["a", "b"] });
});

Deno.test("chain: a compiled spec can be applied many times; outputs are independent", () => {
  const spec = compile([
    { operation: "shift", spec: { "*": { "$": "keys[#2]", "@": "values[]" } } },
    { operation: "default", spec: { extra: { list: [] } } },
  ]);
  const a = spec.apply(frozen({ x: 1, y: 2 })) as { extra: { list: unknown[] } };
  a.extra.list.push("changed by the caller");
  const b = spec.apply(frozen({ x: 1, y: 2 }));
  assertJson(b, { keys: ["x", "y"], values: [1, 2], extra: { list: [] } });
});

Deno.test("chain: the output of one apply can be the input of the next without being changed", () => {
  const spec = compile([{ operation: "modify-overwrite-beta", spec: { n: "=intSum(@(1,n), 1)" } }]);
  const first = spec.apply({ n: 1 }) as { n: number };
  const second = spec.apply(first);
  assertJson(first, { n: 2 });
  assertJson(second, { n: 3 });
});

Deno.test("chain: context reaches the modify operations", () => {
  const spec = compile([{ operation: "modify-default-beta", spec: { tenant: "^tenant.id" } }]);
  assertJson(spec.apply({}, { tenant: { id: "t1" } }), { tenant: "t1" });
  assertJson(spec.apply({}), {});
});

Deno.test("chain: the Java class names of the operations are accepted", () => {
  const spec = compile([
    { operation: "com.bazaarvoice.jolt.Shiftr", spec: { a: "b" } },
    { operation: "com.bazaarvoice.jolt.Modifier$Overwritr", spec: { b: "=toString" } },
    { operation: "com.bazaarvoice.jolt.Modifier$Defaultr", spec: { c: 1 } },
    { operation: "com.bazaarvoice.jolt.Modifier$Definr", spec: { d: 2 } },
    { operation: "com.bazaarvoice.jolt.Defaultr", spec: { e: 3 } },
    { operation: "com.bazaarvoice.jolt.Removr", spec: { e: "" } },
    { operation: "com.bazaarvoice.jolt.CardinalityTransform", spec: { d: "MANY" } },
    { operation: "com.bazaarvoice.jolt.Sortr" },
  ]);
  assertJson(spec.apply({ a: 5 }), { b: "5", c: 1, d: [2] });
  strictEqual(spec.operations[0], "shift");
});

Deno.test("chain: an empty chain returns the input", () => {
  assertJson(compile([]).apply({ a: 1 }), { a: 1 });
  assertJson(compile([]).apply(undefined), null);
});

Deno.test("chain errors: the chain and its entries", () => {
  const cases: [unknown, RegExp, number][] = [
    [{ operation: "shift" }, /must be a JSON array/, -1],
    [null, /must be a JSON array/, -1],
    [[5], /must be an object/, 0],
    [[{ spec: {} }], /"operation" must be a non-blank string/, 0],
    [[{ operation: "  ", spec: {} }], /non-blank/, 0],
    [[{ operation: 7, spec: {} }], /non-blank string/, 0],
    [[{ operation: "sort" }, { operation: "shiftr", spec: {} }], /unknown operation "shiftr"/, 1],
    [[{ operation: "com.bazaarvoice.jolt.Chainr", spec: [] }], /unknown operation/, 0],
    [[{ operation: "default" }], /requires a "spec"/, 0],
  ];
  for (const [spec, re, index] of cases) {
    const err = assertThrows(() => compile(spec), JoltSpecError, re);
    strictEqual(err.operationIndex, index);
    assertJson(err.path, []);
  }
});

Deno.test("chain errors: location and reason of a problem inside a spec", () => {
  const err = assertThrows(
    () =>
      compile([
        { operation: "shift", spec: { a: "b" } },
        { operation: "modify-overwrite-beta", spec: { outer: { "inner|x": "=bogus(@(1,a))" } } },
      ]),
    JoltSpecError,
  );
  strictEqual(err.operationIndex, 1);
  assertJson(err.path, ["outer", "inner|x"]);
  strictEqual(err.reason, 'unknown function "bogus"');
  strictEqual(
    err.message,
    'JOLT spec operation 1 (modify-overwrite-beta) at ["outer","inner|x"]: unknown function "bogus"',
  );
  strictEqual(err.name, "JoltSpecError");
});

Deno.test("parseSpec: compiles JSON text; bad JSON is a JoltSpecError naming the problem", () => {
  const spec = parseSpec('[{"operation":"shift","spec":{"a":"b"}}]');
  assertJson(spec.apply({ a: 1 }), { b: 1 });
  const err = assertThrows(
    () => parseSpec('[{"operation": "shift",'),
    JoltSpecError,
    /invalid JSON: /,
  );
  strictEqual(err.operationIndex, -1);
  assertThrows(() => parseSpec("{}"), JoltSpecError, /array/);
});

Deno.test('chain: a "__proto__" key in the input is plain data (no prototype pollution)', () => {
  const input = JSON.parse('{"__proto__": {"polluted": 1}, "a": {"__proto__": 2}}');
  // Written as JSON text: in a JS object literal "__proto__" would set the prototype instead.
  // In modify specs a leading "_" means "define", so the key is escaped there.
  const spec = parseSpec(`[
    { "operation": "shift", "spec": { "*": "out.&", "a": { "*": "flat.&" } } },
    { "operation": "modify-overwrite-beta", "spec": { "out": { "\\\\__proto__": { "extra": true } } } },
    { "operation": "default", "spec": { "flat": { "__proto__": 0, "x": 1 } } },
    { "operation": "sort" }
  ]`);
  const out = spec.apply(frozen(input)) as Record<string, Record<string, unknown>>;
  assertJson(Object.keys(out), ["flat", "out"]);
  assertJson(Object.keys(out.out), ["__proto__"]);
  assertJson(Object.getOwnPropertyDescriptor(out.out, "__proto__")?.value, {
    polluted: 1,
    extra: true,
  });
  assertJson(Object.getOwnPropertyDescriptor(out.flat, "__proto__")?.value, 2);
  assertJson(out.flat.x, 1);
  assertJson(({} as Record<string, unknown>).polluted, undefined);
  assertJson(Object.getPrototypeOf(out.out), Object.prototype);
});
