/**
 * scanHeader finds Pixel Data and reads the identity elements as dcmjs's full parse does, past
 * sequences of every length form, in Implicit and Explicit VR Little Endian.
 */
import { assertEquals } from "../../../tests/assert.ts";
import {
  type DicomJson,
  fromDicomJson,
  jsonString,
  readDataset,
  toDicomJson,
  TS,
  writeDataset,
} from "../../dicom/mod.ts";
import { scanHeader } from "./header_scan.ts";

const WANTED = [0x00080016, 0x00080018, 0x00080060, 0x00100020, 0x0020000d, 0x0020000e];
const TAGS = ["00080016", "00080018", "00080060", "00100020", "0020000D", "0020000E"];

function instance(extra: DicomJson = {}): DicomJson {
  return {
    "00080005": { vr: "CS", Value: ["ISO_IR 192"] },
    "00080016": { vr: "UI", Value: ["1.2.840.10008.5.1.4.1.1.2"] },
    "00080018": { vr: "UI", Value: ["1.2.826.0.1.3680043.8.498.1"] },
    "00080060": { vr: "CS", Value: ["CT"] },
    "00081140": {
      vr: "SQ",
      Value: [{ "00081150": { vr: "UI", Value: ["1.2.3"] } }, {
        "00081155": { vr: "UI", Value: ["1.2.4"] },
        "00081160": { vr: "IS", Value: [1, 2] },
      }],
    },
    "00100010": { vr: "PN", Value: [{ Alphabetic: "Müller^Jürgen" }] },
    "00100020": { vr: "LO", Value: ["PAT-Ü1", "OTHER"] },
    "0020000D": { vr: "UI", Value: ["1.2.826.0.1.3680043.8.498.2"] },
    "0020000E": { vr: "UI", Value: ["1.2.826.0.1.3680043.8.498.3"] },
    "00280010": { vr: "US", Value: [2] },
    "7FE00010": { vr: "OW", InlineBinary: "AQIDBAUGBwg=" },
    ...extra,
  };
}

/** The identity values as the full dcmjs parse gives them. */
function reference(bytes: Uint8Array, ts: string): Map<number, string> {
  const json = toDicomJson(readDataset(bytes, ts, "7FE00010"));
  const out = new Map<number, string>();
  TAGS.forEach((tag, i) => {
    const v = jsonString(json, tag);
    if (v) out.set(WANTED[i], v);
  });
  return out;
}

/** Offset of (7FE0,0010) in little-endian bytes. */
function pixelOffset(bytes: Uint8Array): number {
  for (let i = 0; i + 4 <= bytes.length; i += 2) {
    if (bytes[i] === 0xe0 && bytes[i + 1] === 0x7f && bytes[i + 2] === 0x10 && bytes[i + 3] === 0) {
      return i;
    }
  }
  return -1;
}

Deno.test("scanHeader: values and header end as dcmjs, Explicit and Implicit VR", () => {
  for (const ts of [TS.explicitLE, TS.implicitLE]) {
    const bytes = writeDataset(fromDicomJson(instance()), ts);
    const scan = scanHeader(bytes, ts, WANTED)!;
    assertEquals(scan.values, reference(bytes, ts), ts);
    assertEquals(scan.values.get(0x00100020), "PAT-Ü1");
    assertEquals(scan.headerEnd, pixelOffset(bytes), ts);
    const early = scanHeader(bytes, ts, WANTED, false)!;
    assertEquals(early.values, scan.values);
    assertEquals(early.headerEnd, undefined);
  }
});

Deno.test("scanHeader: a dataset without Pixel Data ends at its length; empty values are absent", () => {
  const json = instance({ "00100020": { vr: "LO" } });
  delete json["7FE00010"];
  const bytes = writeDataset(fromDicomJson(json), TS.explicitLE);
  const scan = scanHeader(bytes, TS.explicitLE, WANTED)!;
  assertEquals(scan.headerEnd, bytes.length);
  assertEquals(scan.values.has(0x00100020), false);
});

/** Explicit VR LE element bytes. */
function el(group: number, element: number, vr: string, value: number[], long = false): number[] {
  const head = [
    group & 255,
    group >> 8,
    element & 255,
    element >> 8,
    vr.charCodeAt(0),
    vr.charCodeAt(1),
  ];
  const n = value.length;
  return long
    ? [...head, 0, 0, n & 255, (n >> 8) & 255, (n >> 16) & 255, n >>> 24, ...value]
    : [...head, n & 255, n >> 8, ...value];
}

const ascii = (s: string) => [...s].map((c) => c.charCodeAt(0));
const u32 = (n: number) => [n & 255, (n >> 8) & 255, (n >> 16) & 255, n >>> 24];

Deno.test("scanHeader: defined-length items and a UN sequence of undefined length", () => {
  // (0008,1140) SQ, defined length, one defined-length item holding (0008,1150) UI "1.2".
  const inner = el(0x0008, 0x1150, "UI", ascii("1.2\0"));
  const item = [0xfe, 0xff, 0x00, 0xe0, ...u32(inner.length), ...inner];
  const sq = el(0x0008, 0x1140, "SQ", item, true);
  // (0009,1010) UN, undefined length: items in Implicit VR LE, then the sequence delimiter.
  const implicitInner = [0x08, 0x00, 0x50, 0x11, ...u32(4), ...ascii("1.9\0")];
  const un = [
    0x09,
    0x00,
    0x10,
    0x10,
    ...ascii("UN"),
    0,
    0,
    ...u32(0xffffffff),
    0xfe,
    0xff,
    0x00,
    0xe0,
    ...u32(0xffffffff),
    ...implicitInner,
    0xfe,
    0xff,
    0x0d,
    0xe0,
    ...u32(0),
    0xfe,
    0xff,
    0xdd,
    0xe0,
    ...u32(0),
  ];
  const bytes = new Uint8Array([
    ...el(0x0008, 0x0018, "UI", ascii("1.2.3.4\0")),
    ...sq,
    ...un,
    ...el(0x0010, 0x0020, "LO", ascii("ID7 ")),
    ...el(0x7fe0, 0x0010, "OB", [1, 2], true),
  ]);
  const scan = scanHeader(bytes, TS.explicitLE, WANTED)!;
  assertEquals(scan.values, new Map([[0x00080018, "1.2.3.4"], [0x00100020, "ID7"]]));
  assertEquals(scan.headerEnd, bytes.length - 14);
});

Deno.test("scanHeader: deflated or truncated bytes and other character sets are not walked", () => {
  const bytes = writeDataset(fromDicomJson(instance()), TS.explicitLE);
  assertEquals(scanHeader(bytes, TS.deflatedLE, WANTED), undefined);
  assertEquals(scanHeader(bytes.subarray(0, 61), TS.explicitLE, WANTED), undefined);
  const latin2 = instance({ "00080005": { vr: "CS", Value: ["ISO_IR 101"] } });
  const encoded = writeDataset(fromDicomJson(latin2), TS.explicitLE);
  assertEquals(scanHeader(encoded, TS.explicitLE, WANTED), undefined);
});
