import { deepEqual, equal, ok } from "node:assert/strict";
import { decodeBody, encodeData } from "./mod.ts";
import { decodeForm } from "./form.ts";
import { expectError, limits, utf8 } from "../../tests/support/codecs.ts";
import { bestStall } from "../../tests/support/mod.ts";
import { cpuGrowthAsync } from "../../tests/support/cpu_scaling.ts";

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

/** `n` pairs `f<i><brackets>[]=<value>`: array notation with deep bracket keys. */
function bracketForm(n: number, depth: number, value = "v"): string {
  const pairs: string[] = [];
  for (let i = 0; i < n; i++) pairs.push(`f${i}${"[k]".repeat(depth)}[]=${value}`);
  return pairs.join("&");
}

Deno.test("form: pathological bodies of 10 MB never hold the event loop more than 100 ms", async () => {
  const cases: [string, string, string | null][] = [
    ["1,000 fields with 3,000-level bracket keys", bracketForm(1_000, 3_000), null],
    ["1,000 [] values of one name", `${"n".repeat(10_000)}[]=1&`.repeat(1_000), null],
    ["ten million '&'", "&".repeat(10_000_000), null],
    ["1,000,000 fields", "a[]=1&".repeat(1_000_000), "too_many_form_fields"],
  ];
  for (const [name, text, code] of cases) {
    const bytes = utf8(text);
    const r = await bestStall(() => decodeBody(bytes, FORM, limits()));
    equal((r.error as { code?: string } | undefined)?.code, code ?? undefined, name);
    ok(r.stallMs < 100, `${name}: the event loop was held ${r.stallMs.toFixed(0)} ms`);
  }
});

Deno.test("form: decoding time grows linearly in fields, key depth, values and empty pairs", async () => {
  const wide = 1_000_000;
  const cases: [string, string, string][] = [
    // Not larger: an object of 100,000 distinct keys outgrows the CPU caches, and building it
    // takes 20 to 35 times as long as one of 10,000 keys even in a plain loop.
    ["fields", bracketForm(2_000, 1), bracketForm(20_000, 1)],
    ["key depth", bracketForm(10, 10_000), bracketForm(10, 100_000)],
    ["values of one [] name", "a[]=1&".repeat(10_000), "a[]=1&".repeat(100_000)],
    ["one value's size", "a=" + "%41+".repeat(100_000), "a=" + "%41+".repeat(1_000_000)],
    ["empty pairs", "&".repeat(1_000_000), "&".repeat(10_000_000)],
  ];
  for (const [name, small, large] of cases) {
    // Ten times the input: about ten times the time; quadratic work would take about 100 times.
    // Timed in this thread's CPU time: waiting for a core on a busy machine does not count.
    const { ratio, linear } = await cpuGrowthAsync(
      () => decodeForm(small, wide),
      () => decodeForm(large, wide),
      40,
    );
    ok(linear, `${name}: ten times the input took ${ratio.toFixed(1)} times as long`);
  }
});
