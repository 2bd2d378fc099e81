import { deepEqual, equal, ok } from "node:assert/strict";
import { decodeBody } from "./mod.ts";
import { expectError, limits, utf8 } from "../../tests/support/codecs.ts";

const PATIENT = '{"resourceType":"Patient","id":"00123","active":true,"n":[1,2.5]}';
const PATIENT_DATA = { resourceType: "Patient", id: "00123", active: true, n: [1, 2.5] };

Deno.test("json: every JSON content type and a missing Content-Type", async () => {
  for (
    const ct of [
      null,
      "application/json",
      "application/json; charset=utf-8",
      "Application/JSON",
      "application/fhir+json",
      "application/fhir+json; fhirVersion=4.0",
      "application/dicom+json",
      "application/vnd.api+json",
    ]
  ) {
    deepEqual(await decodeBody(utf8(PATIENT), ct, limits()), PATIENT_DATA, `content type ${ct}`);
  }
});

Deno.test("json: scalars, arrays and an empty body", async () => {
  equal(await decodeBody(utf8("42"), "application/json", limits()), 42);
  equal(await decodeBody(utf8('"x"'), "application/json", limits()), "x");
  deepEqual(await decodeBody(utf8("[]"), null, limits()), []);
  equal(await decodeBody(new Uint8Array(0), "application/json", limits()), null);
});

Deno.test("json: malformed body is 400 invalid_json with the parser's reason", async () => {
  for (const body of ["{", '{"a":1,}', "{'a':1}", "nul", '{"a":1} x']) {
    const err = await expectError(
      () => decodeBody(utf8(body), "application/json", limits()),
      400,
      "invalid_json",
      "malformed JSON body: ",
    );
    // The reason after the prefix comes from JSON.parse and is not empty.
    ok(err.message.length > "malformed JSON body: ".length + 5, err.message);
  }
  await expectError(() => decodeBody(utf8("{oops"), null, limits()), 400, "invalid_json", "JSON");
});

Deno.test("json: UTF-8 BOM is skipped", async () => {
  const bytes = new Uint8Array([0xef, 0xbb, 0xbf, ...utf8('{"a":"é"}')]);
  deepEqual(await decodeBody(bytes, "application/json", limits()), { a: "é" });
});

Deno.test("json: charset parameter other than UTF-8 is honoured", async () => {
  // ISO-8859-1: 0xE9 is "é".
  const latin1 = new Uint8Array([...utf8('{"name":"Ren'), 0xe9, ...utf8('"}')]);
  deepEqual(await decodeBody(latin1, "application/json; charset=ISO-8859-1", limits()), {
    name: "René",
  });
  // UTF-16LE.
  const text = '{"name":"Zoë"}';
  const utf16 = new Uint8Array(text.length * 2);
  for (let i = 0; i < text.length; i++) utf16[i * 2] = text.charCodeAt(i);
  deepEqual(await decodeBody(utf16, "application/fhir+json; charset=utf-16le", limits()), {
    name: "Zoë",
  });
  // Quoted and upper-case labels.
  deepEqual(await decodeBody(utf8('{"a":1}'), 'application/json; charset="UTF-8"', limits()), {
    a: 1,
  });
});

Deno.test("json: unknown charset is 415 unsupported_charset", async () => {
  await expectError(
    () => decodeBody(utf8("{}"), "application/json; charset=x-unknown-7", limits()),
    415,
    "unsupported_charset",
    "x-unknown-7",
  );
});

Deno.test("json: nesting deeper than max_json_depth is 400 nesting_too_deep, found before parsing", async () => {
  const deep = (n: number) => "[".repeat(n) + "]".repeat(n);
  deepEqual(await decodeBody(utf8(deep(128)), "application/json", limits()), JSON.parse(deep(128)));
  await expectError(
    () => decodeBody(utf8(deep(129)), "application/json", limits()),
    400,
    "nesting_too_deep",
    "JSON nesting depth exceeds max_json_depth of 128",
  );
  // What used to end in "Maximum call stack size exceeded".
  await expectError(
    () => decodeBody(utf8(deep(100_000)), null, limits()),
    400,
    "nesting_too_deep",
  );
  await expectError(
    () =>
      decodeBody(utf8('{"a":{"b":{"c":1}}}'), "application/json", limits({ max_json_depth: 2 })),
    400,
    "nesting_too_deep",
  );
  // Brackets inside strings do not count, escaped quotes included.
  const inString = JSON.stringify({ s: '[[[[{{{{\\"[[[[' });
  deepEqual(
    await decodeBody(utf8(inString), "application/json", limits({ max_json_depth: 1 })),
    JSON.parse(inString),
  );
});

Deno.test("json: a malformed body is 400 invalid_json, keeping the parser's error as its cause", async () => {
  const err = await decodeBody(utf8("{oops"), "application/json", limits()).then(
    () => undefined,
    (e: unknown) => e as { status: number; code: string; cause?: unknown },
  );
  ok(err, "expected an error");
  equal(err.status, 400);
  equal(err.code, "invalid_json");
  ok(err.cause instanceof SyntaxError, String(err.cause));
});

Deno.test("json: a key repeated in one object is 400 duplicate_json_key, naming the key", async () => {
  for (
    const [body, key] of [
      ['{"subject":{"reference":"Patient/p1"},"subject":{"reference":"Patient/p2"}}', "subject"],
      ['{"a":1,"\\u0061":2}', "a"], // the same key, once escaped
      ['[{"ok":1},{"x":{"y":1,"y":1}}]', "y"],
      ['{"__proto__":1,"__proto__":2}', "__proto__"],
      ['{"":1,"":2}', ""],
    ]
  ) {
    await expectError(
      () => decodeBody(utf8(body), "application/json", limits()),
      400,
      "duplicate_json_key",
      `key ${JSON.stringify(key)} appears twice`,
    );
  }
  // Equal keys in different objects, and keys equal to string values, are not repeats.
  deepEqual(
    await decodeBody(utf8('{"a":{"a":1},"b":[{"a":2},{"a":3}],"c":"a"}'), null, limits()),
    { a: { a: 1 }, b: [{ a: 2 }, { a: 3 }], c: "a" },
  );
});
