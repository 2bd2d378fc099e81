import { deepEqual, equal } from "node:assert/strict";
import { decodeBody, encodeData } from "./mod.ts";
import { expectError, limits, utf8 } from "../../tests/support/codecs.ts";

const FORM = "application/x-www-form-urlencoded";

Deno.test("form: flat object, percent-escapes and + as space", async () => {
  deepEqual(
    await decodeBody(utf8("name=John+Doe&city=K%C3%B6ln&empty=&flag&eq=a%3Db"), FORM, limits()),
    { name: "John Doe", city: "Köln", empty: "", flag: "", eq: "a=b" },
  );
  deepEqual(await decodeBody(utf8("id=00123"), `${FORM}; charset=UTF-8`, limits()), {
    id: "00123",
  });
});

Deno.test("form: [] notation gives arrays, even with one value", async () => {
  deepEqual(await decodeBody(utf8("a[]=1&a[]=2&b[]=x"), FORM, limits()), {
    a: ["1", "2"],
    b: ["x"],
  });
  // Percent-encoded brackets are the same name.
  deepEqual(await decodeBody(utf8("a%5B%5D=1&a%5B%5D=2"), FORM, limits()), { a: ["1", "2"] });
});

Deno.test("form: a repeated plain key gives an array of all its values, in order", async () => {
  deepEqual(await decodeBody(utf8("code=A&code=B&code=C&one=1"), FORM, limits()), {
    code: ["A", "B", "C"],
    one: "1",
  });
  // Both forms of one name share the array.
  deepEqual(await decodeBody(utf8("a=1&a[]=2&a=3"), FORM, limits()), { a: ["1", "2", "3"] });
});

Deno.test("form: other brackets, '?' and empty pairs are taken literally", async () => {
  deepEqual(await decodeBody(utf8("a[b]=1&[]=2&?q=3&&&z=4"), FORM, limits()), {
    "a[b]": "1",
    "[]": "2",
    "?q": "3",
    z: "4",
  });
  deepEqual(await decodeBody(new Uint8Array(0), FORM, limits()), {});
});

Deno.test("form: __proto__ and constructor are own properties", async () => {
  const data = await decodeBody(
    utf8("__proto__=x&__proto__=y&constructor=c&toString[]=t"),
    FORM,
    limits(),
  ) as Record<string, unknown>;
  equal(Object.getPrototypeOf(data), Object.prototype);
  deepEqual(Object.keys(data), ["__proto__", "constructor", "toString"]);
  deepEqual(Object.getOwnPropertyDescriptor(data, "__proto__")?.value, ["x", "y"]);
  equal(data.constructor, "c");
  deepEqual(data.toString, ["t"]);
});

/** A form body with `n` fields. */
function fields(n: number): Uint8Array {
  const pairs: string[] = [];
  for (let i = 0; i < n; i++) pairs.push(`f${i}=${i}`);
  return utf8(pairs.join("&"));
}

Deno.test("form: exactly max_form_fields pairs pass, one more is 413 too_many_form_fields", async () => {
  const l = limits({ max_form_fields: 3 });
  deepEqual(await decodeBody(fields(3), FORM, l), { f0: "0", f1: "1", f2: "2" });
  await expectError(
    () => decodeBody(fields(4), FORM, l),
    413,
    "too_many_form_fields",
    "max_form_fields of 3",
  );
  // Pairs are counted, not names: a repeated name counts each time.
  await expectError(
    () => decodeBody(utf8("a=1&a=2&a=3&a=4"), FORM, l),
    413,
    "too_many_form_fields",
  );
  // Empty segments are not pairs.
  deepEqual(await decodeBody(utf8("&a=1&&b=2&&&c=3&"), FORM, l), { a: "1", b: "2", c: "3" });
  // The default limit.
  equal(Object.keys(await decodeBody(fields(1000), FORM, limits()) as object).length, 1000);
  await expectError(() => decodeBody(fields(1001), FORM, limits()), 413, "too_many_form_fields");
});

Deno.test("form: unknown charset is 415", async () => {
  await expectError(
    () => decodeBody(utf8("a=1"), `${FORM}; charset=nope`, limits()),
    415,
    "unsupported_charset",
  );
});

Deno.test("encodeData: form data is sent as JSON", () => {
  const out = encodeData({ a: ["1", "2"], b: "x" }, FORM);
  equal(out.contentType, "application/json");
  equal(new TextDecoder().decode(out.bytes), '{"a":["1","2"],"b":"x"}');
});
