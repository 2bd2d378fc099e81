/**
 * Unit tests of frame lists, frame cutting (native and encapsulated pixel data), bulk data paths
 * and values, and the Accept negotiation of frames and bulk data.
 */
import { assert, assertEquals, assertRejects } from "../../tests/assert.ts";
import {
  bulkDataPath,
  bulkValue,
  type DicomJson,
  fromDicomJson,
  mayAccept,
  negotiate,
  offerOf,
  parseBulkDataPath,
  parseFrameList,
  PixelDataError,
  pixelFramesOf,
  readDataset,
  TS,
  writeDataset,
  writeP10,
} from "./mod.ts";

const JPEG_LOSSLESS = "1.2.840.10008.1.2.4.70";

function header(frames: number, rows: number, columns: number, samples: number, bits: number) {
  return {
    "00080016": { vr: "UI", Value: ["1.2.840.10008.5.1.4.1.1.7.3"] },
    "00080018": { vr: "UI", Value: ["1.2.3.4"] },
    "00280002": { vr: "US", Value: [samples] },
    "00280008": { vr: "IS", Value: [frames] },
    "00280010": { vr: "US", Value: [rows] },
    "00280011": { vr: "US", Value: [columns] },
    "00280100": { vr: "US", Value: [bits] },
  } as DicomJson;
}

function nativeFile(json: DicomJson, pixels: Uint8Array, vr = "OW", ts: string = TS.explicitLE) {
  const dict = fromDicomJson(json);
  const even = pixels.length % 2 ? new Uint8Array(pixels.length + 1) : pixels;
  even.set(pixels);
  dict["7FE00010"] = { vr, Value: [even.buffer] };
  return writeP10(
    { transferSyntax: ts, sopClassUid: "1.2.840.10008.5.1.4.1.1.7.3", sopInstanceUid: "1.2.3.4" },
    writeDataset(dict, ts),
  );
}

/** Explicit VR LE bytes of an element with a 32-bit length (OB, OV). */
function longElement(group: number, element: number, vr: string, length: number): Uint8Array {
  const out = new Uint8Array(12);
  const view = new DataView(out.buffer);
  view.setUint16(0, group, true);
  view.setUint16(2, element, true);
  out[4] = vr.charCodeAt(0);
  out[5] = vr.charCodeAt(1);
  view.setUint32(8, length, true);
  return out;
}

function item(tag: number, body: Uint8Array): Uint8Array {
  const out = new Uint8Array(8 + body.length);
  const view = new DataView(out.buffer);
  view.setUint16(0, 0xfffe, true);
  view.setUint16(2, tag, true);
  view.setUint32(4, body.length, true);
  out.set(body, 8);
  return out;
}

function join(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** A file with encapsulated pixel data built byte by byte (BOT and EOT as given). */
function encapsulatedFile(
  json: DicomJson,
  fragments: Uint8Array[],
  bot: number[],
  eot?: number[],
): Uint8Array {
  const parts = [writeDataset(fromDicomJson(json), TS.explicitLE)];
  if (eot) {
    const table = new Uint8Array(eot.length * 8);
    eot.forEach((o, i) => new DataView(table.buffer).setBigUint64(i * 8, BigInt(o), true));
    parts.push(longElement(0x7fe0, 0x0001, "OV", table.length), table);
  }
  const botBytes = new Uint8Array(bot.length * 4);
  bot.forEach((o, i) => new DataView(botBytes.buffer).setUint32(i * 4, o, true));
  parts.push(longElement(0x7fe0, 0x0010, "OB", 0xffffffff), item(0xe000, botBytes));
  for (const f of fragments) parts.push(item(0xe000, f));
  parts.push(item(0xe0dd, new Uint8Array(0)));
  return writeP10(
    {
      transferSyntax: JPEG_LOSSLESS,
      sopClassUid: "1.2.840.10008.5.1.4.1.1.7",
      sopInstanceUid: "9",
    },
    join(parts),
  );
}

/** Item offsets of fragments (relative to the first fragment's item tag). */
function offsets(fragments: Uint8Array[]): number[] {
  let at = 0;
  return fragments.map((f) => {
    const o = at;
    at += 8 + f.length;
    return o;
  });
}

const jpeg = (n: number, len = 6) =>
  new Uint8Array([0xff, 0xd8, 0xff, n, ...new Array(len).fill(n)]);
const tail = (n: number, len = 4) => new Uint8Array(new Array(len).fill(0x80 + n));

Deno.test("frame lists: 1-based, comma or %2C separated, no duplicates", async () => {
  assertEquals(parseFrameList("1"), [1]);
  assertEquals(parseFrameList("3,1%2C2%2c7"), [3, 1, 2, 7]);
  for (const bad of ["", "0", "1,", ",1", "1,,2", "a", "1;2", "-1", "1.5", "2,2", "1%2C1"]) {
    await assertRejects(() => parseFrameList(bad));
  }
});

Deno.test("native frames: 16-bit, RGB 8-bit with odd frame size, 1-bit packed", () => {
  const words = Uint8Array.from({ length: 3 * 4 * 3 * 2 }, (_, i) => (i * 7) & 0xff);
  const mono = pixelFramesOf(nativeFile(header(3, 4, 3, 1, 16), words))!;
  assertEquals([mono.encapsulated, mono.numberOfFrames], [false, 3]);
  for (let n = 1; n <= 3; n++) assertEquals(mono.frame(n), words.subarray((n - 1) * 24, n * 24));

  const rgb = Uint8Array.from({ length: 2 * 5 * 3 * 3 }, (_, i) => (i * 13 + 1) & 0xff);
  const color = pixelFramesOf(nativeFile(header(2, 3, 5, 3, 8), rgb, "OB"))!;
  assertEquals(color.frame(1), rgb.subarray(0, 45));
  assertEquals(color.frame(2), rgb.subarray(45, 90));

  // 3 frames of 3x3 bits = 27 bits, LSB first: frame 2 starts at bit 9.
  const bits = [
    1,
    0,
    1,
    1,
    0,
    0,
    1,
    1,
    1,
    /**/ 0,
    1,
    1,
    0,
    1,
    0,
    0,
    0,
    1,
    /**/ 1,
    1,
    1,
    0,
    0,
    0,
    1,
    0,
    1,
  ];
  const packed = new Uint8Array(4);
  bits.forEach((b, i) => packed[i >> 3] |= b << (i & 7));
  const mask = pixelFramesOf(nativeFile(header(3, 3, 3, 1, 1), packed, "OB"))!;
  const unpack = (f: Uint8Array) => Array.from({ length: 9 }, (_, i) => (f[i >> 3] >> (i & 7)) & 1);
  for (let n = 1; n <= 3; n++) {
    const f = mask.frame(n);
    assertEquals(f.length, 2);
    assertEquals(unpack(f), bits.slice((n - 1) * 9, n * 9));
    assertEquals(f[1] & 0xfe, 0, "bits past the frame are cleared");
  }
});

Deno.test("native frames: missing attributes or short pixel data are PixelDataError", async () => {
  const short = nativeFile(header(4, 4, 4, 1, 16), new Uint8Array(64));
  await assertRejects(() => pixelFramesOf(short), /need 128/);
  const noRows = header(1, 4, 4, 1, 16);
  delete noRows["00280010"];
  const err = await assertRejects(() => pixelFramesOf(nativeFile(noRows, new Uint8Array(32))));
  assert(err instanceof PixelDataError);
  const none = writeP10(
    { transferSyntax: TS.explicitLE, sopClassUid: "1.2", sopInstanceUid: "1.3" },
    writeDataset(fromDicomJson(header(1, 1, 1, 1, 8)), TS.explicitLE),
  );
  assertEquals(pixelFramesOf(none), undefined);
});

Deno.test("encapsulated frames: BOT groups fragments, else one fragment per frame", () => {
  const frags = [jpeg(1), tail(1), jpeg(2), tail(2, 6), tail(2, 2)];
  const o = offsets(frags);
  const withBot = pixelFramesOf(encapsulatedFile(header(2, 8, 8, 1, 8), frags, [o[0], o[2]]))!;
  assertEquals(withBot.encapsulated, true);
  assertEquals(withBot.transferSyntax, JPEG_LOSSLESS);
  assertEquals(withBot.frame(1), join(frags.slice(0, 2)));
  assertEquals(withBot.frame(2), join(frags.slice(2)));

  const single = [tail(1), tail(2), tail(3)];
  const perFragment = pixelFramesOf(encapsulatedFile(header(3, 8, 8, 1, 8), single, []))!;
  for (let n = 1; n <= 3; n++) assertEquals(perFragment.frame(n), single[n - 1]);
});

Deno.test("encapsulated frames, no BOT: one frame owns all, EOT, codestream starts", async () => {
  const frags = [jpeg(1), tail(1), tail(2)];
  const one = pixelFramesOf(encapsulatedFile(header(1, 8, 8, 1, 8), frags, []))!;
  assertEquals(one.frame(1), join(frags));

  // Extended Offset Table: fragments that do not open codestreams are grouped by it.
  const raw = [tail(1), tail(2), tail(3), tail(4), tail(5)];
  const o = offsets(raw);
  const eot = pixelFramesOf(
    encapsulatedFile(header(2, 8, 8, 1, 8), raw, [], [o[0], o[3]]),
  )!;
  assertEquals(eot.frame(1), join(raw.slice(0, 3)));
  assertEquals(eot.frame(2), join(raw.slice(3)));

  const markers = [jpeg(1), tail(1), jpeg(2), jpeg(3), tail(3), tail(4)];
  const byMarker = pixelFramesOf(encapsulatedFile(header(3, 8, 8, 1, 8), markers, []))!;
  assertEquals(byMarker.frame(1), join(markers.slice(0, 2)));
  assertEquals(byMarker.frame(2), markers[2]);
  assertEquals(byMarker.frame(3), join(markers.slice(3)));

  const err = await assertRejects(() =>
    pixelFramesOf(encapsulatedFile(header(2, 8, 8, 1, 8), raw, []))
  );
  assert(err instanceof PixelDataError, String(err));
});

Deno.test("bulk data paths and values, nested in sequences too", () => {
  const ref = {
    study: "1.2",
    series: "1.2.3",
    instance: "1.2.3.4",
    tagPath: "00480105/0/00282000",
  };
  assertEquals(bulkDataPath(ref), "/bulkdata/1.2/1.2.3/1.2.3.4/00480105/0/00282000");
  assertEquals(parseBulkDataPath(bulkDataPath(ref)), ref);
  assertEquals(parseBulkDataPath("/bulkdata/1.2/1.2.3/1.2.3.4/7fe00010")?.tagPath, "7FE00010");
  for (
    const bad of [
      "/bulkdata/1.2/7FE00010",
      "/bulkdata/1.2/1.3/1.4/7FE0",
      "/bulkdata/a/b/c/7FE00010",
    ]
  ) {
    assertEquals(parseBulkDataPath(bad), undefined, bad);
  }
  const icc = Uint8Array.from({ length: 2000 }, (_, i) => i & 0xff);
  const dict = fromDicomJson({
    "00100010": { vr: "PN", Value: [{ Alphabetic: "A^B" }] },
    "00480105": { vr: "SQ", Value: [{ "00282000": { vr: "OB" } }] },
  });
  (dict["00480105"].Value![0] as Record<string, unknown>)["00282000"] = {
    vr: "OB",
    Value: [icc.buffer],
  };
  const read = readDataset(writeDataset(dict, TS.explicitLE), TS.explicitLE);
  assertEquals(bulkValue(read, "00480105/0/00282000"), icc);
  assertEquals(bulkValue(read, "00480105/1/00282000"), undefined);
  assertEquals(bulkValue(read, "00100010"), undefined, "not binary");
  assertEquals(bulkValue(read, "00282000"), undefined, "not at the top level");
});

Deno.test("Accept: native and compressed frames, multipart and single part, 406 cases", () => {
  const native = offerOf(TS.implicitLE, false);
  const jpegOffer = offerOf("1.2.840.10008.1.2.4.50", true);
  const octet = { type: "application/octet-stream", transferSyntax: TS.explicitLE, single: false };
  assertEquals(negotiate(null, native, 3), octet);
  assertEquals(negotiate("*/*", native, 1), octet);
  assertEquals(
    negotiate('multipart/related; type="application/octet-stream"', native, 2),
    octet,
  );
  assertEquals(
    negotiate(
      'multipart/related; type="application/octet-stream"; transfer-syntax=1.2.840.10008.1.2.1',
      native,
      2,
    ),
    octet,
  );
  assertEquals(negotiate("application/octet-stream", native, 1), { ...octet, single: true });
  assertEquals(negotiate("application/octet-stream", native, 2), undefined, "one part only");
  assertEquals(negotiate('multipart/related; type="image/jpeg"', native, 1), undefined);

  const jpegMulti = { type: "image/jpeg", transferSyntax: "1.2.840.10008.1.2.4.50", single: false };
  assertEquals(negotiate(null, jpegOffer, 2), jpegMulti);
  assertEquals(negotiate('multipart/related; type="image/jpeg"', jpegOffer, 2), jpegMulti);
  assertEquals(
    negotiate(
      'multipart/related; type="image/jpeg"; transfer-syntax=1.2.840.10008.1.2.4.70',
      jpegOffer,
      1,
    ),
    undefined,
    "another JPEG syntax",
  );
  assertEquals(
    negotiate('multipart/related; type="application/octet-stream"', jpegOffer, 1),
    undefined,
  );
  assertEquals(
    negotiate(
      'multipart/related; type="application/octet-stream"; transfer-syntax=*',
      jpegOffer,
      1,
    ),
    { ...jpegMulti, type: "application/octet-stream" },
  );
  assertEquals(
    negotiate(
      'multipart/related; type="application/octet-stream", multipart/related; type="image/jpeg"; q=0.5',
      jpegOffer,
      1,
    ),
    jpegMulti,
    "the second choice",
  );
  assertEquals(negotiate("image/*", jpegOffer, 1), { ...jpegMulti, single: true });
  assertEquals(negotiate("image/jpeg;q=0, application/json", jpegOffer, 1), undefined);
  assertEquals(mayAccept("application/dicom+json", 1), false);
  assertEquals(mayAccept('multipart/related; type="image/jls"', 4), true);
  assertEquals(mayAccept("image/jls", 4), false, "a single part cannot carry 4 frames");
});
