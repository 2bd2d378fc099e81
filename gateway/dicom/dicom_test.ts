/** Unit tests of the DICOM helpers: DICOM JSON, Part 10, multipart, queries, statuses. */
import { assertEquals, assertRejects } from "../../tests/assert.ts";
import {
  buildQuery,
  decodeMultipart,
  encodeMultipart,
  fromDicomJson,
  instancesOfBody,
  parseP10,
  parseStatus,
  readDataset,
  relatedContentType,
  statusKind,
  studyAndSeriesOf,
  tagOf,
  toDicomJson,
  TS,
  vrOf,
  writeDataset,
  writeP10,
} from "./mod.ts";
import type { DicomJson } from "./mod.ts";

const SAMPLE: DicomJson = {
  "00080016": { vr: "UI", Value: ["1.2.840.10008.5.1.4.1.1.7"] },
  "00080018": { vr: "UI", Value: ["1.2.3.4.5"] },
  "00080020": { vr: "DA" },
  "00091010": { vr: "LO", Value: ["private"] },
  "00100010": { vr: "PN", Value: [{ Alphabetic: "DOE^JANE" }] },
  "00200013": { vr: "IS", Value: [7] },
  "00281050": { vr: "DS", Value: [40.5] },
  "00081115": { vr: "SQ", Value: [{ "0020000E": { vr: "UI", Value: ["1.2.3"] } }] },
  "7FE00010": { vr: "OW", InlineBinary: "AQIDBA==" },
};

Deno.test("DICOM JSON survives encoding in Explicit VR Little Endian, private tags included", () => {
  const bytes = writeDataset(fromDicomJson(SAMPLE), TS.explicitLE);
  assertEquals(toDicomJson(readDataset(bytes, TS.explicitLE)), SAMPLE);
});

Deno.test("Implicit VR Little Endian: standard tags keep their VR, private ones become UN", () => {
  const bytes = writeDataset(fromDicomJson(SAMPLE), TS.implicitLE);
  const back = toDicomJson(readDataset(bytes, TS.implicitLE));
  assertEquals(back["00100010"], SAMPLE["00100010"]);
  assertEquals(back["00091010"].vr, "UN");
  assertEquals(back["7FE00010"], SAMPLE["7FE00010"]);
});

Deno.test("header parse stops before Pixel Data; large binaries leave only the VR", () => {
  const dict = fromDicomJson(SAMPLE);
  dict["7FE00010"] = { vr: "OW", Value: [new Uint8Array(4096).buffer] };
  const bytes = writeDataset(dict, TS.explicitLE);
  assertEquals(toDicomJson(readDataset(bytes, TS.explicitLE, "7FE00010"))["7FE00010"], {
    vr: "OW",
  });
  const full = toDicomJson(readDataset(bytes, TS.explicitLE), { inlineLimit: 1024 });
  assertEquals(full["7FE00010"], { vr: "OW" });
});

Deno.test("Part 10: written files parse back to their meta and dataset bytes", () => {
  const dataset = writeDataset(fromDicomJson(SAMPLE), TS.explicitLE);
  const meta = {
    transferSyntax: TS.explicitLE,
    sopClassUid: "1.2.840.10008.5.1.4.1.1.7",
    sopInstanceUid: "1.2.3.4.5",
  };
  const file = writeP10(meta, dataset);
  const parsed = parseP10(file);
  assertEquals(parsed.meta.transferSyntax, meta.transferSyntax);
  assertEquals(parsed.meta.sopClassUid, meta.sopClassUid);
  assertEquals(parsed.meta.sopInstanceUid, meta.sopInstanceUid);
  assertEquals(parsed.dataset, dataset);
});

Deno.test("studyAndSeriesOf reads the study and series UIDs, in either little-endian syntax", () => {
  const meta = { sopClassUid: "1.2.840.10008.5.1.4.1.1.7", sopInstanceUid: "1.2.3.4.5" };
  const json: DicomJson = {
    ...SAMPLE,
    "0020000D": { vr: "UI", Value: ["1.2.3.4"] },
    "0020000E": { vr: "UI", Value: ["1.2.3.4.1"] },
  };
  for (const ts of [TS.explicitLE, TS.implicitLE]) {
    const file = parseP10(
      writeP10({ ...meta, transferSyntax: ts }, writeDataset(fromDicomJson(json), ts)),
    );
    assertEquals(studyAndSeriesOf(file), { study: "1.2.3.4", series: "1.2.3.4.1" });
  }
  const { "0020000E": _series, ...noSeries } = json;
  const file = parseP10(
    writeP10(
      { ...meta, transferSyntax: TS.explicitLE },
      writeDataset(fromDicomJson(noSeries), TS.explicitLE),
    ),
  );
  assertEquals(studyAndSeriesOf(file), { study: "1.2.3.4", series: undefined });
});

Deno.test("multipart/related round trip, and instances of bodies of each kind", async () => {
  const dataset = writeDataset(fromDicomJson(SAMPLE), TS.explicitLE);
  const file = writeP10({
    transferSyntax: TS.explicitLE,
    sopClassUid: "1.2.840.10008.5.1.4.1.1.7",
    sopInstanceUid: "1.2.3.4.5",
  }, dataset);
  const body = encodeMultipart([
    { contentType: "application/dicom", body: file },
    { contentType: "application/dicom", body: file },
  ], "b0undary");
  const parts = decodeMultipart(body, "b0undary");
  assertEquals(parts.map((p) => p.body), [file, file]);
  assertEquals(parts[0].headers.get("content-type"), "application/dicom");
  assertEquals(instancesOfBody(body, relatedContentType("b0undary")).length, 2);
  assertEquals(instancesOfBody(file, "application/dicom")[0].meta.sopInstanceUid, "1.2.3.4.5");
  const fromJson = instancesOfBody(
    new TextEncoder().encode(JSON.stringify(SAMPLE)),
    "application/dicom+json",
  );
  assertEquals(fromJson[0].meta.sopInstanceUid, "1.2.3.4.5");
  await assertRejects(() => instancesOfBody(new Uint8Array(10), "application/dicom"), /no DICOM/);
});

Deno.test("multipart/related decoding: a preamble is skipped; malformed bodies say what is wrong", async () => {
  const text = (s: string) => new TextEncoder().encode(s);
  const parts = decodeMultipart(
    text("preamble\r\n--b\r\nContent-Type: a/b\r\n\r\nhello\r\n--b--\r\n"),
    "b",
  );
  assertEquals(parts.length, 1);
  assertEquals(new TextDecoder().decode(parts[0].body), "hello");
  const cases: [string, RegExp][] = [
    ["no boundary here", /does not contain its boundary/],
    ["--b\r\nContent-Type: a/b\r\n\r\nhello", /malformed multipart body/],
    ["--b\r\n\r\nbare\r\n--b--\r\n", /a part has no header fields/],
  ];
  for (const [body, re] of cases) {
    await assertRejects(() => decodeMultipart(text(body), "b"), re);
  }
});

Deno.test("QIDO parameters become a C-FIND identifier with default return keys", () => {
  const q = buildQuery(
    "SERIES",
    new URLSearchParams(
      "Modality=CT&00100010=DOE&includefield=SeriesDate&limit=5&offset=2&fuzzymatching=true",
    ),
    { study: "1.2.3" },
  );
  assertEquals(q.level, "SERIES");
  assertEquals([q.limit, q.offset, q.fuzzy], [5, 2, true]);
  assertEquals(q.identifier["00080060"], { vr: "CS", Value: ["CT"] });
  assertEquals(q.identifier["00100010"], { vr: "PN", Value: [{ Alphabetic: "DOE*" }] });
  assertEquals(q.identifier["0020000D"], { vr: "UI", Value: ["1.2.3"] });
  assertEquals(q.identifier["00080021"], { vr: "DA" });
  assertEquals(q.identifier["0020000E"], { vr: "UI" });
  assertEquals(q.identifier["00080052"], { vr: "CS", Value: ["SERIES"] });
});

Deno.test("dictionary and statuses", () => {
  assertEquals([tagOf("PatientID"), tagOf("0020000d"), tagOf("NoSuchKeyword")], [
    "00100020",
    "0020000D",
    undefined,
  ]);
  assertEquals([vrOf("00100010"), vrOf("7FE00010"), vrOf("00280106")], ["PN", "OW", "US"]);
  assertEquals([parseStatus("0xA801"), parseStatus("c000"), parseStatus("x")], [
    0xa801,
    0xc000,
    undefined,
  ]);
  assertEquals(
    [0, 0xff00, 0xfe00, 0xb000, 0xa700].map(statusKind),
    ["success", "pending", "cancel", "warning", "failure"],
  );
});
