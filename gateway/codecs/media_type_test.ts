import { deepEqual, equal, notEqual, strictEqual } from "node:assert/strict";
import { formatOf, parseMediaType } from "./mod.ts";
import { decoderFor, decodeText, essenceOf, isUtf8Charset, withUtf8Charset } from "./media_type.ts";
import { expectError } from "../../tests/support/codecs.ts";

Deno.test("parseMediaType: missing or empty header is null", () => {
  equal(parseMediaType(null), null);
  equal(parseMediaType(undefined), null);
  equal(parseMediaType(""), null);
  equal(parseMediaType("   "), null);
  equal(parseMediaType(" ; charset=utf-8"), null);
});

Deno.test("parseMediaType: essence is trimmed and lowercased, no params", () => {
  deepEqual(parseMediaType("Application/JSON"), { type: "application/json", params: {} });
  deepEqual(parseMediaType("  text/csv  "), { type: "text/csv", params: {} });
});

Deno.test("parseMediaType: parameters, quoting, escapes and case", () => {
  deepEqual(parseMediaType("text/plain; Charset=ISO-8859-1"), {
    type: "text/plain",
    params: { charset: "ISO-8859-1" },
  });
  deepEqual(parseMediaType('multipart/form-data; boundary="a;b c"; charset=utf-8'), {
    type: "multipart/form-data",
    params: { boundary: "a;b c", charset: "utf-8" },
  });
  deepEqual(parseMediaType('text/x; a="q\\"uote\\\\d" ; b = 2 ;; c'), {
    type: "text/x",
    params: { a: 'q"uote\\d', b: "2" },
  });
  // The first of a repeated parameter wins; boundary case is preserved.
  deepEqual(parseMediaType("multipart/form-data; boundary=AbC; boundary=zzz"), {
    type: "multipart/form-data",
    params: { boundary: "AbC" },
  });
  // Unterminated quoted value takes the rest.
  deepEqual(parseMediaType('text/plain; charset="utf-8'), {
    type: "text/plain",
    params: { charset: "utf-8" },
  });
  // A parameter named __proto__ is dropped, not assigned to the prototype.
  const mt = parseMediaType("text/plain; __proto__=x; constructor=y")!;
  deepEqual(Object.keys(mt.params), ["constructor"]);
  equal(mt.params.constructor, "y");
  equal(Object.getPrototypeOf(mt.params), Object.prototype);
});

Deno.test("essenceOf: lowercased type without parameters", () => {
  equal(essenceOf("Text/CSV; charset=utf-8"), "text/csv");
  equal(essenceOf(""), "");
});

Deno.test("formatOf: every content type of the SPEC table and the fallbacks", () => {
  const cases: [string | null, string][] = [
    [null, "json"],
    ["", "json"],
    ["application/json", "json"],
    ["application/json; charset=utf-8", "json"],
    ["APPLICATION/FHIR+JSON", "json"],
    ["application/fhir+json; fhirVersion=4.0", "json"],
    ["application/dicom+json", "json"],
    ["application/vnd.api+json", "json"],
    ["application/problem+json", "json"],
    ["application/xml", "xml"],
    ["text/xml; charset=iso-8859-1", "xml"],
    ["application/soap+xml; action=x", "xml"],
    ["application/fhir+xml", "xml"],
    ["application/atom+xml", "xml"],
    ["text/csv", "csv"],
    ["text/csv; header=present", "csv"],
    ["application/x-www-form-urlencoded", "form"],
    ["multipart/form-data; boundary=x", "multipart"],
    ["text/plain", "text"],
    ["text/html; charset=utf-8", "text"],
    ["text/markdown", "text"],
    ["image/png", "binary"],
    ["image/jpeg", "binary"],
    ["image/svg+xml", "binary"],
    ["video/mp4", "binary"],
    ["audio/mpeg", "binary"],
    ["application/pdf", "binary"],
    ["application/octet-stream", "binary"],
    ["application/dicom", "binary"],
    ["application/zip", "binary"],
    ["multipart/related; type=application/dicom", "binary"],
    ["garbage", "binary"],
  ];
  for (const [ct, format] of cases) equal(formatOf(ct), format, `formatOf(${ct})`);
});

Deno.test("decoderFor: UTF-8 by default, known labels, cached, unknown is 415", async () => {
  equal(decoderFor(undefined).encoding, "utf-8");
  strictEqual(decoderFor("UTF-8"), decoderFor(undefined));
  strictEqual(decoderFor("utf8"), decoderFor(undefined));
  equal(decoderFor("latin1").encoding, "windows-1252");
  equal(decoderFor("ISO-8859-1").encoding, "windows-1252");
  equal(decoderFor("utf-16le").encoding, "utf-16le");
  equal(decoderFor("Shift_JIS").encoding, "shift_jis");
  strictEqual(decoderFor("latin1"), decoderFor("latin1"));
  notEqual(decoderFor("latin1"), decoderFor(undefined));
  await expectError(() => decoderFor("klingon"), 415, "unsupported_charset", '"klingon"');
  // "replacement" encodings are refused by the platform too.
  await expectError(() => decoderFor("iso-2022-kr"), 415, "unsupported_charset");
});

Deno.test("decodeText: charsets and BOM", () => {
  equal(decodeText(new Uint8Array([0x63, 0x61, 0x66, 0xe9]), "iso-8859-1"), "café");
  equal(decodeText(new Uint8Array([0xef, 0xbb, 0xbf, 0x61]), undefined), "a");
  equal(decodeText(new Uint8Array([0x61, 0x00, 0xe9, 0x00]), "utf-16le"), "aé");
  equal(decodeText(new Uint8Array([0x82, 0xa0]), "shift_jis"), "あ");
});

Deno.test("isUtf8Charset", () => {
  equal(isUtf8Charset(undefined), true);
  equal(isUtf8Charset(" UTF-8 "), true);
  equal(isUtf8Charset("utf8"), true);
  equal(isUtf8Charset("latin1"), false);
});

Deno.test("withUtf8Charset: keeps UTF-8 headers, replaces another charset", () => {
  const keep = "application/fhir+json; charset=utf-8";
  equal(withUtf8Charset(keep, parseMediaType(keep)!), keep);
  const none = "text/csv";
  equal(withUtf8Charset(none, parseMediaType(none)!), none);
  const latin = 'text/xml; charset="ISO-8859-1"; note="a b"; v=1';
  equal(withUtf8Charset(latin, parseMediaType(latin)!), 'text/xml; charset=utf-8; note="a b"; v=1');
});
