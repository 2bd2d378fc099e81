/** Every content type of SPEC's table and every content limit, end to end through the gateway. */
import { assertEquals } from "./assert.ts";
import { ECHO_PIPELINE, startTestGateway, type TestGateway } from "./harness.ts";

const ECHO = ECHO_PIPELINE + `
[proxy.content_limits]
max_body_size = 1048576
max_csv_rows = 3
max_csv_columns = 3
max_csv_cell_bytes = 16
max_xml_depth = 4
max_xml_references = 3
max_multipart_files = 2
max_form_fields = 3
`;

async function post(gw: TestGateway, contentType: string | null, body: BodyInit) {
  const headers: Record<string, string> = {};
  if (contentType) headers["content-type"] = contentType;
  const res = await fetch(`${gw.url}/echo`, { method: "POST", headers, body });
  return { status: res.status, body: await res.json() };
}

async function withGateway(fn: (gw: TestGateway) => Promise<void>) {
  const gw = await startTestGateway(ECHO, { logLevel: "warn" });
  try {
    await fn(gw);
  } finally {
    await gw.stop();
  }
}

Deno.test("JSON family and a missing Content-Type are JSON data", () =>
  withGateway(async (gw) => {
    for (
      const ct of ["application/json", "application/fhir+json", "application/dicom+json", null]
    ) {
      // Bytes, so fetch adds no text/plain of its own when ct is null.
      const r = await post(gw, ct, new TextEncoder().encode('{"resourceType":"Patient","id":"1"}'));
      assertEquals(r.status, 200, String(ct));
      assertEquals(r.body.data, { resourceType: "Patient", id: "1" });
      assertEquals(r.body.content.format, "json");
    }
  }));

Deno.test("XML becomes JSON with @attributes; DTDs and entities are refused", () =>
  withGateway(async (gw) => {
    for (const ct of ["application/xml", "text/xml", "application/soap+xml"]) {
      const r = await post(gw, ct, '<patient id="007"><name use="official">Doe</name></patient>');
      assertEquals(r.status, 200);
      assertEquals(r.body.data, {
        patient: { "@id": "007", name: { "@use": "official", "#text": "Doe" } },
      });
    }
    const xxe = await post(
      gw,
      "application/xml",
      '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><x>&e;</x>',
    );
    assertEquals(xxe.status, 400);
    assertEquals(xxe.body.error.code, "xml_dtd_forbidden");
    const bad = await post(gw, "application/xml", "<a><b></a>");
    assertEquals(bad.status, 400);
    assertEquals(bad.body.error.code, "invalid_xml");
  }));

Deno.test("max_xml_depth: at the limit passes, one deeper is 413", () =>
  withGateway(async (gw) => {
    const at = await post(gw, "application/xml", "<a><b><c><d>x</d></c></b></a>");
    assertEquals(at.status, 200);
    const over = await post(gw, "application/xml", "<a><b><c><d><e>x</e></d></c></b></a>");
    assertEquals(over.status, 413);
    assertEquals(over.body.error.code, "xml_too_deep");
  }));

Deno.test("CSV becomes row objects with formula cells escaped; max_csv_rows at and over", () =>
  withGateway(async (gw) => {
    const r = await post(gw, "text/csv", "id,formula\n1,=SUM(A1)\n2,@cmd\n3,plain\n");
    assertEquals(r.status, 200);
    assertEquals(r.body.data, [
      { id: "1", formula: "'=SUM(A1)" },
      { id: "2", formula: "'@cmd" },
      { id: "3", formula: "plain" },
    ]);
    const over = await post(gw, "text/csv", "id\n1\n2\n3\n4\n");
    assertEquals(over.status, 413);
    assertEquals(over.body.error.code, "too_many_csv_rows");
    const ragged = await post(gw, "text/csv", "a,b\n1\n");
    assertEquals(ragged.status, 400);
    assertEquals(ragged.body.error.code, "invalid_csv");
  }));

Deno.test("max_csv_columns and max_csv_cell_bytes: at the limit passes, over is 413", () =>
  withGateway(async (gw) => {
    const at = await post(gw, "text/csv", "a,b,c\n1,2,0123456789abcdef\n");
    assertEquals(at.status, 200);
    assertEquals(at.body.data, [{ a: "1", b: "2", c: "0123456789abcdef" }]);
    const columns = await post(gw, "text/csv", "a,b,c,d\n1,2,3,4\n");
    assertEquals(columns.status, 413);
    assertEquals(columns.body.error.code, "too_many_csv_columns");
    assertEquals(
      columns.body.error.message,
      "CSV row on line 1 has more than max_csv_columns of 3 fields",
    );
    const cell = await post(gw, "text/csv", "a\n0123456789abcdefg\n");
    assertEquals(cell.status, 413);
    assertEquals(cell.body.error.code, "csv_cell_too_large");
    assertEquals(
      cell.body.error.message,
      "CSV cell on line 2 is larger than max_csv_cell_bytes of 16 bytes",
    );
  }));

Deno.test("max_xml_references: at the limit passes, one more is 413", () =>
  withGateway(async (gw) => {
    const at = await post(gw, "application/xml", '<a b="&lt;">&amp;&#65;</a>');
    assertEquals(at.status, 200);
    assertEquals(at.body.data, { a: { "@b": "<", "#text": "&A" } });
    const over = await post(gw, "application/xml", '<a b="&lt;">&amp;&#65;&#x42;</a>');
    assertEquals(over.status, 413);
    assertEquals(over.body.error.code, "too_many_xml_references");
  }));

Deno.test("forms become a flat object with [] arrays; max_form_fields at and over", () =>
  withGateway(async (gw) => {
    const r = await post(gw, "application/x-www-form-urlencoded", "name=Doe&ids[]=1&ids[]=2");
    assertEquals(r.status, 200);
    assertEquals(r.body.data, { name: "Doe", ids: ["1", "2"] });
    const over = await post(gw, "application/x-www-form-urlencoded", "a=1&b=2&c=3&d=4");
    assertEquals(over.status, 413);
    assertEquals(over.body.error.code, "too_many_form_fields");
  }));

Deno.test("multipart: fields and file metadata with sha256; max_multipart_files at and over", () =>
  withGateway(async (gw) => {
    const form = new FormData();
    form.append("note", "scan");
    form.append("file", new Blob(["hello"], { type: "text/plain" }), "a.txt");
    form.append("file", new Blob([new Uint8Array([1, 2, 3])], { type: "image/png" }), "b.png");
    const r = await post(gw, null, form);
    assertEquals(r.status, 200);
    assertEquals(r.body.data.fields, { note: "scan" });
    assertEquals(r.body.data.files, [
      {
        field: "file",
        filename: "a.txt",
        content_type: "text/plain",
        size: 5,
        sha256: "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824",
      },
      {
        field: "file",
        filename: "b.png",
        content_type: "image/png",
        size: 3,
        sha256: "039058c6f2c0cb492c533b0a4d14ef77cc0f78abccced5287d84a1a2011cfb81",
      },
    ]);
    form.append("file", new Blob(["x"]), "c.bin");
    const over = await post(gw, null, form);
    assertEquals(over.status, 413);
    assertEquals(over.body.error.code, "too_many_files");
  }));

Deno.test("binary types keep their bytes and report content_type, size and sha256", () =>
  withGateway(async (gw) => {
    for (
      const ct of [
        "image/png",
        "video/mp4",
        "audio/wav",
        "application/pdf",
        "application/octet-stream",
      ]
    ) {
      const r = await post(gw, ct, new Uint8Array([1, 2, 3]));
      assertEquals(r.status, 200, ct);
      assertEquals(r.body.data, {
        content_type: ct,
        size: 3,
        sha256: "039058c6f2c0cb492c533b0a4d14ef77cc0f78abccced5287d84a1a2011cfb81",
      });
      assertEquals(r.body.content.format, "binary");
    }
  }));
