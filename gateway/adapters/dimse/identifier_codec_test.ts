/** Identifiers encoded and decoded without dcmjs read as dcmjs reads them. */
import { assertEquals } from "../../../tests/assert.ts";
import {
  type DicomJson,
  fromDicomJson,
  readDataset,
  toDicomJson,
  TS,
  writeDataset,
} from "../../dicom/mod.ts";
import { decodeIdentifier, encodeIdentifier } from "./identifier_codec.ts";

const SYNTAXES = [TS.implicitLE, TS.explicitLE];

/** What the dcmjs path reads from bytes. */
function viaDcmjs(bytes: Uint8Array, ts: string): DicomJson {
  return toDicomJson(readDataset(bytes, ts));
}

/** dcmjs keeps the padding of an odd-length date range; it is not part of the value. */
function unpadded(json: DicomJson): DicomJson {
  if (json["00080020"]) json["00080020"].Value = ["20240101-20241231"];
  return json;
}

const STUDY_QUERY: DicomJson = {
  "00080052": { vr: "CS", Value: ["STUDY"] },
  "0020000D": { vr: "UI", Value: ["1.2.826.0.1.3680043.8.498.1"] },
  "00100020": { vr: "LO" },
  "00100010": { vr: "PN", Value: [{ Alphabetic: "Doe^Jane" }] },
  "00080020": { vr: "DA", Value: ["20240101-20241231"] },
  "00080021": { vr: "DA", Value: ["20240101"] },
  "00080061": { vr: "CS", Value: ["CT", "MR"] },
  "00201208": { vr: "IS", Value: [12] },
  "00101030": { vr: "DS", Value: [72.5] },
  "00280010": { vr: "US", Value: [512] },
  "00080005": { vr: "CS", Value: ["ISO_IR 6"] },
  "00081030": { vr: "LO", Value: ["Chest CT"] },
  "00104000": { vr: "LT", Value: ["line one\r\nline two"] },
};

const WORKLIST_QUERY: DicomJson = {
  "00100010": { vr: "PN" },
  "00100020": { vr: "LO", Value: ["PAT1"] },
  "00400100": {
    vr: "SQ",
    Value: [{
      "00080060": { vr: "CS", Value: ["CT"] },
      "00400001": { vr: "AE", Value: ["CT01"] },
      "00400002": { vr: "DA", Value: ["20260101"] },
      "00400003": { vr: "TM" },
      "00400008": {
        vr: "SQ",
        Value: [{ "00080100": { vr: "SH", Value: ["X1"] } }, { "00080102": { vr: "SH" } }],
      },
    }],
  },
  "00081110": { vr: "SQ" },
};

Deno.test("identifier codec: what it encodes, dcmjs reads as the JSON it was given", () => {
  for (const ts of SYNTAXES) {
    for (const json of [STUDY_QUERY, WORKLIST_QUERY, {}]) {
      const bytes = encodeIdentifier(json, ts);
      if (!bytes) throw new Error(`not encoded in ${ts}`);
      assertEquals(viaDcmjs(bytes, ts), viaDcmjs(writeDataset(fromDicomJson(json), ts), ts));
    }
  }
});

Deno.test("identifier codec: it decodes what dcmjs writes as dcmjs reads it", () => {
  for (const ts of SYNTAXES) {
    for (const json of [STUDY_QUERY, WORKLIST_QUERY]) {
      const bytes = writeDataset(fromDicomJson(json), ts);
      assertEquals(decodeIdentifier(bytes, ts), unpadded(viaDcmjs(bytes, ts)));
      const own = encodeIdentifier(json, ts)!;
      assertEquals(decodeIdentifier(own, ts), unpadded(viaDcmjs(own, ts)));
      assertEquals(decodeIdentifier(own, ts), decodeIdentifier(bytes, ts));
    }
  }
});

Deno.test("identifier codec: an empty item (return the sequence) is kept, unlike dcmjs's read", () => {
  const json: DicomJson = { "00400100": { vr: "SQ", Value: [{}] } };
  for (const ts of SYNTAXES) assertEquals(decodeIdentifier(encodeIdentifier(json, ts)!, ts), json);
});

Deno.test("identifier codec: undefined leaves a dataset to dcmjs", () => {
  const ts = TS.explicitLE;
  const cases: DicomJson[] = [
    { "00080005": { vr: "CS", Value: ["ISO_IR 100"] } },
    { "00100010": { vr: "PN", Value: ["Müller"] } },
    { "00100010": { vr: "PN", Value: [{ Alphabetic: "A", Ideographic: "B" }] } },
    { "00291010": { vr: "OB", InlineBinary: "AAAA" } },
    { "00090010": { vr: "LO", Value: ["private"] } },
    { "00280034": { vr: "IS", Value: [1.5] } },
  ];
  for (const json of cases) assertEquals(encodeIdentifier(json, ts), undefined);
  assertEquals(encodeIdentifier(STUDY_QUERY, TS.explicitBE), undefined);
  const latin1 = writeDataset(
    fromDicomJson({
      "00080005": { vr: "CS", Value: ["ISO_IR 100"] },
      "00100010": { vr: "PN", Value: [{ Alphabetic: "Muller" }] },
    }),
    ts,
  );
  assertEquals(decodeIdentifier(latin1, ts), undefined);
  assertEquals(decodeIdentifier(new Uint8Array([0x08, 0x00, 0x52]), ts), undefined);
});
