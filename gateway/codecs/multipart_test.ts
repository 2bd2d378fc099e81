import { deepEqual, equal } from "node:assert/strict";
import { decodeBody, encodeData } from "./mod.ts";
import {
  expectError,
  limits,
  SHA256_ABC,
  SHA256_EMPTY,
  SHA256_HELLO_WORLD,
  utf8,
} from "../../tests/support/codecs.ts";

const BOUNDARY = "----WebKitFormBoundary7MA4YWxkTrZu0gW";
const CT = `multipart/form-data; boundary=${BOUNDARY}`;

/** One part: headers then content. */
interface Part {
  headers: string[];
  content: string | Uint8Array;
}

/** A field part. */
function field(name: string, value: string): Part {
  return { headers: [`Content-Disposition: form-data; name="${name}"`], content: value };
}

/** A file part. */
function file(
  name: string,
  filename: string,
  type: string | null,
  content: string | Uint8Array,
): Part {
  const headers = [`Content-Disposition: form-data; name="${name}"; filename="${filename}"`];
  if (type !== null) headers.push(`Content-Type: ${type}`);
  return { headers, content };
}

/** A multipart body from parts (CRLF line ends, closing delimiter). */
function body(parts: Part[], boundary = BOUNDARY, preamble = "", epilogue = ""): Uint8Array {
  const chunks: Uint8Array[] = [utf8(preamble)];
  for (const part of parts) {
    chunks.push(utf8(`--${boundary}\r\n${part.headers.join("\r\n")}\r\n\r\n`));
    chunks.push(typeof part.content === "string" ? utf8(part.content) : part.content);
    chunks.push(utf8("\r\n"));
  }
  chunks.push(utf8(`--${boundary}--\r\n${epilogue}`));
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let offset = 0;
  for (const c of chunks) {
    out.set(c, offset);
    offset += c.length;
  }
  return out;
}

Deno.test("multipart: fields and files are separated, files described, not kept", async () => {
  const data = await decodeBody(
    body([
      field("patient", "00123"),
      field("note", "line1\r\nline2 é"),
      file("scan", "scan.png", "image/png", "abc"),
      file("report", "report.pdf", "application/pdf", "hello world"),
    ]),
    CT,
    limits(),
  );
  deepEqual(data, {
    fields: { patient: "00123", note: "line1\r\nline2 é" },
    files: [
      {
        field: "scan",
        filename: "scan.png",
        content_type: "image/png",
        size: 3,
        sha256: SHA256_ABC,
      },
      {
        field: "report",
        filename: "report.pdf",
        content_type: "application/pdf",
        size: 11,
        sha256: SHA256_HELLO_WORLD,
      },
    ],
  });
});

Deno.test("multipart: binary file content with CRLF and dashes inside is measured exactly", async () => {
  const bytes = new Uint8Array(300);
  for (let i = 0; i < bytes.length; i++) bytes[i] = i % 256;
  bytes.set(utf8("\r\n--not-the-boundary\r\n"), 100);
  const data = await decodeBody(
    body([file("f", "blob.bin", "application/octet-stream", bytes)]),
    CT,
    limits(),
  ) as {
    files: { size: number; sha256: string }[];
  };
  equal(data.files[0].size, 300);
  const expected = Array.from(
    new Uint8Array(await crypto.subtle.digest("SHA-256", bytes)),
    (b) => b.toString(16).padStart(2, "0"),
  ).join("");
  equal(data.files[0].sha256, expected);
});

Deno.test("multipart: repeated field names give arrays; file part details", async () => {
  const data = await decodeBody(
    body([
      field("tag", "a"),
      field("tag", "b"),
      field("tag", "c"),
      file("doc", "", "application/octet-stream", ""), // empty file input of a browser
      file("notes", "n.txt", null, "abc"), // no Content-Type: text/plain
      {
        headers: [
          'Content-Disposition: form-data; name="raw"',
          "Content-Type: application/octet-stream",
        ],
        content: "abc",
      },
      {
        headers: [
          `Content-Disposition: form-data; name="u"; filename="x.txt"; filename*=UTF-8''na%C3%AFve.txt`,
        ],
        content: "",
      },
    ]),
    CT,
    limits(),
  );
  deepEqual(data, {
    fields: { tag: ["a", "b", "c"] },
    files: [
      {
        field: "doc",
        filename: "",
        content_type: "application/octet-stream",
        size: 0,
        sha256: SHA256_EMPTY,
      },
      {
        field: "notes",
        filename: "n.txt",
        content_type: "text/plain",
        size: 3,
        sha256: SHA256_ABC,
      },
      {
        field: "raw",
        filename: "",
        content_type: "application/octet-stream",
        size: 3,
        sha256: SHA256_ABC,
      },
      {
        field: "u",
        filename: "naïve.txt",
        content_type: "text/plain",
        size: 0,
        sha256: SHA256_EMPTY,
      },
    ],
  });
});

Deno.test("multipart: quoted boundary, preamble and epilogue", async () => {
  const boundary = "simple boundary";
  deepEqual(
    await decodeBody(
      body([field("a", "1")], boundary, "This is the preamble.\r\n", "This is the epilogue."),
      `multipart/form-data; boundary="${boundary}"`,
      limits(),
    ),
    { fields: { a: "1" }, files: [] },
  );
  deepEqual(await decodeBody(new Uint8Array(0), CT, limits()), { fields: {}, files: [] });
});

Deno.test("multipart: __proto__ field is an own property", async () => {
  const data = await decodeBody(body([field("__proto__", "x")]), CT, limits()) as {
    fields: Record<string, unknown>;
  };
  equal(Object.getPrototypeOf(data.fields), Object.prototype);
  equal(Object.getOwnPropertyDescriptor(data.fields, "__proto__")?.value, "x");
});

/** `n` file parts and `m` field parts. */
function manyParts(files: number, fields: number): Uint8Array {
  const parts: Part[] = [];
  for (let i = 0; i < files; i++) parts.push(file(`f${i}`, `${i}.txt`, "text/plain", "abc"));
  for (let i = 0; i < fields; i++) parts.push(field(`k${i}`, `${i}`));
  return body(parts);
}

Deno.test("multipart: exactly max_multipart_files files pass, one more is 413 too_many_files", async () => {
  const l = limits({ max_multipart_files: 2 });
  const ok = await decodeBody(manyParts(2, 1), CT, l) as { files: unknown[] };
  equal(ok.files.length, 2);
  await expectError(
    () => decodeBody(manyParts(3, 0), CT, l),
    413,
    "too_many_files",
    "max_multipart_files of 2",
  );
  equal(
    (await decodeBody(manyParts(10, 0), CT, limits()) as { files: unknown[] }).files.length,
    10,
  );
  await expectError(() => decodeBody(manyParts(11, 0), CT, limits()), 413, "too_many_files");
});

Deno.test("multipart: fields count against max_form_fields (exactly passes, one more is 413)", async () => {
  const l = limits({ max_form_fields: 3 });
  const ok = await decodeBody(manyParts(1, 3), CT, l) as { fields: Record<string, string> };
  deepEqual(ok.fields, { k0: "0", k1: "1", k2: "2" });
  await expectError(
    () => decodeBody(manyParts(0, 4), CT, l),
    413,
    "too_many_form_fields",
    "max_form_fields of 3",
  );
  // Files do not count as fields.
  equal(
    (await decodeBody(manyParts(5, 3), CT, limits({ max_form_fields: 3 })) as { files: unknown[] })
      .files.length,
    5,
  );
});

Deno.test("multipart: missing or invalid boundary is 400 invalid_multipart", async () => {
  const b = body([field("a", "1")]);
  await expectError(
    () => decodeBody(b, "multipart/form-data", limits()),
    400,
    "invalid_multipart",
    "missing boundary",
  );
  await expectError(
    () => decodeBody(b, "multipart/form-data; boundary=", limits()),
    400,
    "invalid_multipart",
  );
  await expectError(
    () => decodeBody(b, `multipart/form-data; boundary=${"x".repeat(71)}`, limits()),
    400,
    "invalid_multipart",
    "invalid boundary",
  );
  await expectError(
    () => decodeBody(b, "multipart/form-data; boundary=other", limits()),
    400,
    "invalid_multipart",
    "no boundary line",
  );
});

Deno.test("multipart: malformed bodies are 400 invalid_multipart", async () => {
  const full = body([field("a", "1"), file("f", "a.txt", "text/plain", "abc")]);
  // Truncated: no closing delimiter.
  await expectError(
    () => decodeBody(full.subarray(0, full.length - 10), CT, limits()),
    400,
    "invalid_multipart",
    "not finished",
  );
  // A part without a name.
  await expectError(
    () =>
      decodeBody(
        body([{ headers: ["Content-Disposition: form-data"], content: "x" }]),
        CT,
        limits(),
      ),
    400,
    "invalid_multipart",
    "no Content-Disposition name",
  );
  await expectError(
    () => decodeBody(body([{ headers: ["Content-Type: text/plain"], content: "x" }]), CT, limits()),
    400,
    "invalid_multipart",
  );
  // A part header over 8 KiB.
  await expectError(
    () =>
      decodeBody(
        body([{
          headers: [`Content-Disposition: form-data; name="${"n".repeat(9000)}"`],
          content: "x",
        }]),
        CT,
        limits(),
      ),
    400,
    "invalid_multipart",
  );
  // Not multipart at all.
  await expectError(() => decodeBody(utf8("hello"), CT, limits()), 400, "invalid_multipart");
});

Deno.test("encodeData: multipart data is sent as JSON", () => {
  const data = { fields: { a: "1" }, files: [] };
  const out = encodeData(data, CT);
  equal(out.contentType, "application/json");
  deepEqual(JSON.parse(new TextDecoder().decode(out.bytes)), data);
});
