import { deepEqual, equal } from "node:assert/strict";
import { decodeBody, encodeData, formatOf, parseMediaType } from "./mod.ts";
import { expectError, limits, utf8 } from "../../tests/support/codecs.ts";

const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

Deno.test("mod: the four contract functions work together per format", async () => {
  const cases: [string | null, string, unknown][] = [
    [null, '{"a":1}', { a: 1 }],
    ["application/fhir+json", '{"a":1}', { a: 1 }],
    ["text/xml", "<a>1</a>", { a: "1" }],
    ["text/csv", "a\n1\n", [{ a: "1" }]],
    ["application/x-www-form-urlencoded", "a=1", { a: "1" }],
    ["text/plain", "a=1", "a=1"],
  ];
  for (const [ct, body, data] of cases) {
    deepEqual(await decodeBody(utf8(body), ct, limits()), data, String(ct));
  }
  equal(formatOf(null), "json");
  deepEqual(parseMediaType("text/csv; charset=utf-8"), {
    type: "text/csv",
    params: { charset: "utf-8" },
  });
});

Deno.test("encodeData: JSON family keeps its content type; missing becomes application/json", () => {
  const data = { resourceType: "Patient", id: "00123" };
  for (
    const ct of [
      "application/json",
      "application/fhir+json; fhirVersion=4.0",
      "application/dicom+json",
      "application/vnd.api+json",
    ]
  ) {
    const out = encodeData(data, ct);
    equal(out.contentType, ct);
    equal(text(out.bytes), '{"resourceType":"Patient","id":"00123"}');
  }
  const none = encodeData([1, "x"], null);
  equal(none.contentType, "application/json");
  equal(text(none.bytes), '[1,"x"]');
  // Bytes are UTF-8, so another declared charset is replaced.
  equal(
    encodeData({}, "application/json; charset=utf-16").contentType,
    "application/json; charset=utf-8",
  );
});

Deno.test("encodeData: JSON edge values", async () => {
  equal(text(encodeData(undefined, "application/json").bytes), "null");
  equal(text(encodeData(null, "application/json").bytes), "null");
  equal(text(encodeData("é", "application/json").bytes), '"é"');
  await expectError(
    () => encodeData({ n: 1n }, "application/json"),
    500,
    "unserializable_data",
    "BigInt",
  );
  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  await expectError(() => encodeData(cyclic, "application/json"), 500, "unserializable_data");
});

Deno.test("encodeData: round trip of every re-encodable format", async () => {
  const cases: [string, string][] = [
    ["application/json", '{"a":[1,{"b":null}]}'],
    ["application/xml", '<r id="1"><a>x &amp; y</a><a>2</a><b c="d">t</b></r>'],
    ["text/csv", 'a,b\r\n1,"x,y"\r\n'],
    ["text/plain", "plain text\n"],
  ];
  for (const [ct, body] of cases) {
    const data = await decodeBody(utf8(body), ct, limits());
    const out = encodeData(data, ct);
    equal(out.contentType, ct);
    equal(text(out.bytes), body, ct);
    deepEqual(await decodeBody(out.bytes, out.contentType, limits()), data);
  }
});

Deno.test("encodeData: form, multipart and binary become JSON", () => {
  for (
    const ct of [
      "application/x-www-form-urlencoded",
      "multipart/form-data; boundary=x",
      "image/png",
      "application/pdf",
      "application/octet-stream",
      "application/zip",
    ]
  ) {
    const out = encodeData({ replaced: true }, ct);
    equal(out.contentType, "application/json", ct);
    equal(text(out.bytes), '{"replaced":true}');
  }
});
