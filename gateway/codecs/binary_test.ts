import { deepEqual, equal } from "node:assert/strict";
import { decodeBody, encodeData } from "./mod.ts";
import { sha256Hex } from "./binary.ts";
import {
  expectError,
  limits,
  SHA256_ABC,
  SHA256_EMPTY,
  SHA256_HELLO_WORLD,
  utf8,
} from "../../tests/support/codecs.ts";

Deno.test("sha256Hex: known vectors, and a view hashes only its own bytes", async () => {
  equal(await sha256Hex(utf8("abc")), SHA256_ABC);
  equal(await sha256Hex(new Uint8Array(0)), SHA256_EMPTY);
  const big = utf8("xxhello worldyy");
  equal(await sha256Hex(big.subarray(2, 13)), SHA256_HELLO_WORLD);
});

Deno.test("binary: metadata for every binary content type and unknown ones", async () => {
  const bytes = utf8("abc");
  for (
    const type of [
      "image/png",
      "image/jpeg",
      "image/svg+xml",
      "video/mp4",
      "audio/mpeg",
      "application/pdf",
      "application/octet-stream",
      "application/dicom",
      "application/zip",
      "multipart/related",
    ]
  ) {
    deepEqual(await decodeBody(bytes, type, limits()), {
      content_type: type,
      size: 3,
      sha256: SHA256_ABC,
    });
  }
  // The content type is the lowercased essence, parameters dropped.
  deepEqual(
    await decodeBody(bytes, "Multipart/Related; type=application/dicom; boundary=x", limits()),
    { content_type: "multipart/related", size: 3, sha256: SHA256_ABC },
  );
  deepEqual(await decodeBody(new Uint8Array(0), "image/png", limits()), {
    content_type: "image/png",
    size: 0,
    sha256: SHA256_EMPTY,
  });
});

Deno.test("binary: arbitrary bytes are hashed unchanged", async () => {
  const bytes = new Uint8Array(256);
  for (let i = 0; i < 256; i++) bytes[i] = i;
  const meta = await decodeBody(bytes, "application/octet-stream", limits()) as {
    size: number;
    sha256: string;
  };
  equal(meta.size, 256);
  equal(meta.sha256, "40aff2e9d2d8922e47afd4648e6967497158785fbd1da870e7110266bf944880");
});

Deno.test("text: text/plain and other text types decode to a string", async () => {
  equal(await decodeBody(utf8("hello\nwörld"), "text/plain", limits()), "hello\nwörld");
  equal(await decodeBody(utf8("<p>hi</p>"), "text/html; charset=utf-8", limits()), "<p>hi</p>");
  equal(await decodeBody(utf8("# T"), "text/markdown", limits()), "# T");
  equal(await decodeBody(new Uint8Array(0), "text/plain", limits()), "");
});

Deno.test("text: charset parameter and unknown charset", async () => {
  equal(
    await decodeBody(
      new Uint8Array([0x4d, 0xfc, 0x6c, 0x6c, 0x65, 0x72]),
      "text/plain; charset=latin1",
      limits(),
    ),
    "Müller",
  );
  await expectError(
    () => decodeBody(utf8("x"), "text/plain; charset=nope", limits()),
    415,
    "unsupported_charset",
  );
});

Deno.test("encodeData: binary data is sent as JSON", () => {
  const meta = { content_type: "image/png", size: 3, sha256: SHA256_ABC };
  const out = encodeData(meta, "image/png");
  equal(out.contentType, "application/json");
  deepEqual(JSON.parse(new TextDecoder().decode(out.bytes)), meta);
});

Deno.test("encodeData: text keeps a string as is, other data becomes JSON", () => {
  const out = encodeData("héllo\r\n", "text/plain");
  equal(out.contentType, "text/plain");
  deepEqual(out.bytes, utf8("héllo\r\n"));
  // Encoded bytes are UTF-8: a declared latin1 charset is replaced.
  const latin = encodeData("é", "text/plain; charset=iso-8859-1");
  equal(latin.contentType, "text/plain; charset=utf-8");
  deepEqual(latin.bytes, new Uint8Array([0xc3, 0xa9]));
  const obj = encodeData({ a: 1 }, "text/plain");
  equal(obj.contentType, "application/json");
  equal(new TextDecoder().decode(obj.bytes), '{"a":1}');
});
