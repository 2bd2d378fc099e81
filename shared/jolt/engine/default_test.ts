/** Tests of the default operation: the Defaultr javadoc examples, wildcards, arrays, nulls. */

import { JoltSpecError, JoltTransformError } from "../mod.ts";
import { assertJson, assertThrows, frozen, run } from "../../../tests/support/jolt.ts";
import { compile } from "../mod.ts";

const defaults = (spec: unknown, input: unknown) => run("default", spec, input);

Deno.test("default doc: literal, '|' and '*' keys (the ratings example)", () => {
  const input = {
    Rating: 3,
    SecondaryRatings: {
      quality: { Range: 7, Value: 3, Id: "quality" },
      sharpness: { Value: 4, Id: "sharpness" },
    },
  };
  const spec = {
    RatingRange: 5,
    SecondaryRatings: {
      "quality|value": {
        ValueLabel: null,
        Label: null,
        MaxLabel: "Great",
        MinLabel: "Terrible",
        DisplayType: "NORMAL",
      },
      "*": {
        Range: 5,
        ValueLabel: null,
        Label: null,
        MaxLabel: "High",
        MinLabel: "Low",
        DisplayType: "NORMAL",
      },
    },
  };
  assertJson(defaults(spec, input), {
    Rating: 3,
    RatingRange: 5,
    SecondaryRatings: {
      quality: {
        Range: 7,
        Value: 3,
        Id: "quality",
        ValueLabel: null,
        Label: null,
        MaxLabel: "Great",
        MinLabel: "Terrible",
        DisplayType: "NORMAL",
      },
      sharpness: {
        Range: 5,
        Value: 4,
        Id: "sharpness",
        ValueLabel: null,
        Label: null,
        MaxLabel: "High",
        MinLabel: "Low",
        DisplayType: "NORMAL",
      },
    },
  });
});

Deno.test("default doc: 'key[]' defaults array elements by index", () => {
  const spec = { "photos[]": { "2": { url: "http://www.bazaarvoice.com", caption: "" } } };
  assertJson(defaults(spec, {}), {
    photos: [null, null, { url: "http://www.bazaarvoice.com", caption: "" }],
  });
  assertJson(defaults(spec, { photos: [{ url: "a" }, null, { url: "c" }, { url: "d" }] }), {
    photos: [{ url: "a" }, null, { url: "c", caption: "" }, { url: "d" }],
  });
});

Deno.test("default: existing non-null values are kept, missing and null ones filled", () => {
  const spec = { a: 1, b: 2, c: 3, d: { x: 1 } };
  assertJson(defaults(spec, { a: "keep", b: null, d: { x: 0, y: 2 } }), {
    a: "keep",
    b: 2,
    c: 3,
    d: { x: 0, y: 2 },
  });
});

Deno.test("default: '*' and '|' only touch keys that exist (after literal defaults)", () => {
  const spec = { new: {}, "*": { tag: "t" }, "p|q|missing": { or: true } };
  assertJson(defaults(spec, { p: {}, q: { or: false }, s: null }), {
    p: { tag: "t", or: true },
    q: { tag: "t", or: false },
    s: { tag: "t" },
    new: { tag: "t" },
  });
});

Deno.test("default: '*' with a literal value fills every null entry", () => {
  assertJson(defaults({ "*": 0 }, { a: null, b: 1 }), { a: 0, b: 1 });
});

Deno.test("default: '*' over array elements", () => {
  const spec = { "items[]": { "*": { qty: 1 } } };
  assertJson(defaults(spec, { items: [{ qty: 5 }, {}, null] }), {
    items: [{ qty: 5 }, { qty: 1 }, { qty: 1 }],
  });
});

Deno.test("default: spec and data disagree on the type: the data wins", () => {
  assertJson(defaults({ a: { b: 1 } }, { a: "text" }), { a: "text" });
  assertJson(defaults({ "a[]": { "0": 1 } }, { a: { x: 1 } }), { a: { x: 1 } });
  assertJson(defaults({ a: { b: 1 } }, { a: [1] }), { a: [1] });
});

Deno.test("default: a null input starts as an empty object", () => {
  assertJson(defaults({ a: 1 }, null), { a: 1 });
});

Deno.test("default: a top-level array input with index keys", () => {
  assertJson(defaults({ "1": { b: 2 }, "*": { a: 1 } }, [{ z: 0 }]), [{ z: 0, a: 1 }, {
    b: 2,
    a: 1,
  }]);
});

Deno.test("default: a top-level array input needs index keys", () => {
  const spec = compile([{ operation: "default", spec: { a: 1 } }]);
  assertThrows(() => spec.apply([1, 2]), JoltTransformError, /top level array/);
});

Deno.test("default: empty object and array defaults, copied fresh each time", () => {
  const spec = compile([{ operation: "default", spec: { list: [1], map: { k: [] } } }]);
  const out1 = spec.apply(frozen({})) as { list: unknown[]; map: { k: unknown[] } };
  out1.list.push("mutated");
  out1.map.k.push("mutated");
  assertJson(spec.apply(frozen({})), { list: [1], map: { k: [] } });
});

Deno.test("default: scalars are left alone", () => {
  assertJson(defaults({ a: 1 }, "text"), "text");
});

Deno.test("default spec errors", () => {
  assertThrows(
    () => compile([{ operation: "default", spec: { "tuna*": "marlin" } }]),
    JoltSpecError,
  );
  assertThrows(() => compile([{ operation: "default", spec: { "a[]": { x: 1 } } }]), JoltSpecError);
  assertThrows(() => compile([{ operation: "default", spec: [1] }]), JoltSpecError);
  const err = assertThrows(
    () => compile([{ operation: "default", spec: { a: { "b*": 1 } } }]),
    JoltSpecError,
  );
  assertJson(err.path, ["a", "b*"]);
});

Deno.test("default: array indexes, padding and copied literals are bounded (no 500 MB from a 90-byte spec)", () => {
  // The spec that made the cloud answer 500 MB: one index far out.
  assertThrows(
    () => compile([{ operation: "default", spec: { "items[]": { "99999999": 0 } } }]),
    JoltSpecError,
    /array default index 99999999 is over the limit of 1000000/,
  );
  // Indexes within the limit, but padded under `*` for every array of the input: the run's
  // budget stops it.
  const pad = compile([{ operation: "default", spec: { "*[]": { "99999": 0 } } }]);
  const arrays = (n: number) =>
    Object.fromEntries(Array.from({ length: n }, (_, i) => [`a${i}`, []]));
  assertJson((pad.apply(arrays(1)) as { a0: unknown[] }).a0.length, 100_000);
  assertJson(Object.keys(pad.apply(arrays(9)) as object).length, 9);
  assertThrows(
    () => pad.apply(arrays(11)),
    JoltTransformError,
    /more than 1000000 values \(nulls padding arrays, copied spec values/,
  );
  // A large literal copied for every key of the input.
  const literal = Array.from({ length: 1000 }, (_, i) => i);
  const copy = compile([{ operation: "default", spec: { "*": { list: literal } } }]);
  const input = (n: number) =>
    Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, {}]));
  assertJson(Object.keys(copy.apply(input(100)) as object).length, 100);
  assertThrows(() => copy.apply(input(2000)), JoltTransformError, /more than 1000000/);
});

Deno.test("compile: specs nested too deep or too large are refused with code spec_too_large", () => {
  let deep: unknown = "out";
  for (let i = 0; i < 10_000; i++) deep = { a: deep };
  const err = assertThrows(
    () => compile([{ operation: "shift", spec: deep }]),
    JoltSpecError,
    /nested deeper than 128 levels/,
  );
  assertJson(err.code, "spec_too_large");
  const wide = Object.fromEntries(Array.from({ length: 250_000 }, (_, i) => [`k${i}`, "x"]));
  assertJson(
    assertThrows(() => compile([{ operation: "shift", spec: wide }]), JoltSpecError).code,
    "spec_too_large",
  );
  assertJson(
    assertThrows(() => compile([{ operation: "nope" }]), JoltSpecError).code,
    "invalid_spec",
  );
});
