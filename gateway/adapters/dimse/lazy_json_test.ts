/**
 * Lazy DICOM JSON of received bytes: untouched, it is its bytes (sent again as they came); any
 * look decodes it, and from then on it is encoded from the JSON, changes included.
 */
import { assert, assertEquals } from "../../../tests/assert.ts";
import {
  type DicomJson,
  fromDicomJson,
  readDataset,
  toDicomJson,
  TS,
  writeDataset,
} from "../../dicom/mod.ts";
import { JsonDataset } from "./dataset.ts";
import { decodeElement, decodeIdentifier, encodeIdentifier } from "./identifier_codec.ts";
import { holdsElement, lazyDicomJson, peekElement, untouched } from "./lazy_json.ts";

const MATCH: DicomJson = {
  "00080052": { vr: "CS", Value: ["STUDY"] },
  "00100010": { vr: "PN", Value: [{ Alphabetic: "Doe^Jane" }] },
  "00100020": { vr: "LO", Value: ["P1"] },
  "0020000D": { vr: "UI", Value: ["1.2.3.4"] },
};

/** Bytes this codec would not write as they are: Latin-1 text (decoded by dcmjs, as UTF-8). */
function latin1Match(ts: string): Uint8Array {
  return writeDataset(
    fromDicomJson({
      "00080005": { vr: "CS", Value: ["ISO_IR 100"] },
      "00080052": { vr: "CS", Value: ["STUDY"] },
      "00100010": { vr: "PN", Value: [{ Alphabetic: "Müller^Jörg" }] },
    }),
    ts,
  );
}

/** What a JsonDataset of `json` sends in `ts` (a view of it, as connection.ts sends it). */
function sent(json: DicomJson, ts: string): Uint8Array {
  const b = new JsonDataset(json, ts).getDenaturalizedDataset();
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}

Deno.test("lazy DICOM JSON: untouched, it is sent as the bytes it came in", () => {
  for (const ts of [TS.implicitLE, TS.explicitLE]) {
    for (const bytes of [encodeIdentifier(MATCH, ts)!, latin1Match(ts)]) {
      const json = lazyDicomJson(bytes, ts);
      assertEquals(untouched(json)?.bytes, bytes);
      // The very bytes: not a copy, not an encoding of the decoded JSON.
      const out = sent(json, ts);
      assertEquals(out, bytes);
      assert(out.buffer === bytes.buffer && out.byteOffset === bytes.byteOffset);
      assert(untouched(json), "sending is not a look");
    }
  }
});

Deno.test("lazy DICOM JSON: being a promise's value or having an element peeked is not a look", async () => {
  for (const ts of [TS.implicitLE, TS.explicitLE]) {
    const bytes = encodeIdentifier(MATCH, ts)!;
    const json = lazyDicomJson(bytes, ts);
    // Resolving a promise with it reads its `then`.
    assert((await Promise.resolve(json)) === json);
    assertEquals(peekElement(json, 0x00080052, "00080052"), MATCH["00080052"]);
    assertEquals(peekElement(json, 0x00080060, "00080060"), undefined);
    assertEquals(peekElement(json, 0x0020000d, "0020000D"), MATCH["0020000D"]);
    assert(untouched(json), "still its bytes");
    // An ordinary object answers as it is.
    assertEquals(peekElement(MATCH, 0x00100020, "00100020"), MATCH["00100020"]);
  }
});

Deno.test("decodeElement reads one top-level element as decodeIdentifier does", () => {
  for (const ts of [TS.implicitLE, TS.explicitLE]) {
    const json: DicomJson = {
      "00080005": { vr: "CS", Value: ["ISO_IR 192"] },
      "00080006": { vr: "SQ", Value: [{ "00080100": { vr: "SH", Value: ["X"] } }] },
      ...MATCH,
    };
    const bytes = encodeIdentifier(json, ts)!;
    const all = decodeIdentifier(bytes, ts)!;
    for (const [tag, el] of Object.entries(all)) {
      assertEquals(decodeElement(bytes, ts, parseInt(tag, 16)), el, tag);
    }
    assertEquals(decodeElement(bytes, ts, 0x00080060), null);
    assertEquals(decodeElement(bytes, ts, 0x7fe00010), null);
    assertEquals(decodeElement(bytes.subarray(0, 5), ts, 0x00080052), undefined);
  }
});

Deno.test("lazy DICOM JSON: a look decodes it as the eager path does", () => {
  for (const ts of [TS.implicitLE, TS.explicitLE]) {
    const bytes = encodeIdentifier(MATCH, ts)!;
    const json = lazyDicomJson(bytes, ts);
    assertEquals(json["00100020"], MATCH["00100020"]);
    assertEquals(untouched(json), undefined);
    assertEquals({ ...json }, decodeIdentifier(bytes, ts));
    assertEquals(JSON.parse(JSON.stringify(lazyDicomJson(bytes, ts))), MATCH);
    assertEquals(Object.keys(lazyDicomJson(bytes, ts)), Object.keys(MATCH));
    assert("00080052" in lazyDicomJson(bytes, ts));
    // What the codec leaves to dcmjs is decoded by dcmjs.
    const latin1 = latin1Match(ts);
    assertEquals({ ...lazyDicomJson(latin1, ts) }, toDicomJson(readDataset(latin1, ts)));
  }
});

Deno.test("lazy DICOM JSON: changed after a look, it is encoded again with the change", () => {
  const ts = TS.explicitLE;
  const bytes = latin1Match(ts);
  // In place, inside an element: only the look can tell, and it does.
  const inPlace = lazyDicomJson(bytes, ts);
  (inPlace["00100010"].Value as { Alphabetic: string }[])[0] = { Alphabetic: "Smith^Ann" };
  const out = sent(inPlace, ts);
  assert(out.buffer !== bytes.buffer);
  assertEquals(toDicomJson(readDataset(out, ts))["00100010"].Value, [{ Alphabetic: "Smith^Ann" }]);
  // A key added, a key deleted.
  const added = lazyDicomJson(bytes, ts);
  added["00100020"] = { vr: "LO", Value: ["NEW"] };
  assertEquals(toDicomJson(readDataset(sent(added, ts), ts))["00100020"].Value, ["NEW"]);
  const deleted = lazyDicomJson(bytes, ts);
  delete deleted["00100010"];
  assertEquals(toDicomJson(readDataset(sent(deleted, ts), ts))["00100010"], undefined);
});

Deno.test("lazy DICOM JSON: bytes of another transfer syntax are converted, not sent as they are", () => {
  const bytes = encodeIdentifier(MATCH, TS.implicitLE)!;
  const json = lazyDicomJson(bytes, TS.implicitLE);
  assertEquals(sent(json, TS.explicitLE), encodeIdentifier(MATCH, TS.explicitLE));
});

Deno.test("holdsElement reads whether untouched bytes hold a top-level element", () => {
  for (const ts of [TS.implicitLE, TS.explicitLE]) {
    const bytes = encodeIdentifier(MATCH, ts)!;
    assertEquals(holdsElement(bytes, ts, 0x00080052), true);
    assertEquals(holdsElement(bytes, ts, 0x00080060), false);
    assertEquals(holdsElement(bytes, ts, 0x7fe00010), false);
    const noLevel = encodeIdentifier({ "00100020": MATCH["00100020"] }, ts)!;
    assertEquals(holdsElement(noLevel, ts, 0x00080052), false);
    // A sequence of undefined length before it: the walk cannot tell.
    const sq = writeDataset(
      fromDicomJson({
        "00080006": { vr: "SQ", Value: [{ "00080100": { vr: "SH", Value: ["X"] } }] },
      }),
      ts,
    );
    const undefinedLength = holdsElement(sq, ts, 0x00080052);
    assert(undefinedLength === false || undefinedLength === undefined);
    assertEquals(holdsElement(bytes.subarray(0, 5), ts, 0x00080052), undefined);
  }
});
