/**
 * The private dcmjs API behind gateway/dicom/dcmjs_read.ts (`DicomMessage._read`) still does what
 * the gateway relies on; a dcmjs upgrade that changes it fails here, naming the version.
 */
import { assert, assertEquals } from "../../tests/assert.ts";
import { dcmjsVersion, decodeDataset, type DecodeOptions } from "./dcmjs_read.ts";
import { type DcmjsDict, fromDicomJson, toDicomJson, TS, writeDataset } from "./mod.ts";
import dcmjs from "dcmjs";

const DATASET = fromDicomJson({
  "00080016": { vr: "UI", Value: ["1.2.840.10008.5.1.4.1.1.7"] },
  "00100010": { vr: "PN", Value: [{ Alphabetic: "DOE^JANE" }] },
  "0020000D": { vr: "UI", Value: ["1.2.3"] },
  "00200013": { vr: "IS", Value: [7] },
  "7FE00010": { vr: "OW", InlineBinary: "AQIDBA==" },
});

/** The version deno.json pins. */
async function pinned(): Promise<string> {
  const config = JSON.parse(await Deno.readTextFile(new URL("../../deno.json", import.meta.url)));
  return /dcmjs@([^/]+)$/.exec(config.imports.dcmjs)?.[1] ?? "?";
}

/** Decodes DATASET written in `syntax`, failing loudly (with the version) if dcmjs changed. */
function decoded(syntax: string, options: DecodeOptions = {}): DcmjsDict {
  try {
    return decodeDataset(writeDataset(DATASET, syntax).slice().buffer, syntax, options);
  } catch (err) {
    throw new Error(`dcmjs ${dcmjsVersion()} changed DicomMessage._read: ${err}`);
  }
}

/** Asserts `actual` equals `expected`, naming the dcmjs version and what changed. */
function same(actual: unknown, expected: unknown, what: string): void {
  assertEquals(
    actual,
    expected,
    `dcmjs ${dcmjsVersion()} changed DicomMessage._read (gateway/dicom/dcmjs_read.ts): ${what}`,
  );
}

Deno.test("dcmjs door: the version in use is the one deno.json pins, and errors name it", async () => {
  assertEquals(dcmjsVersion(), await pinned());
  const message = dcmjs.data.DicomMessage as unknown as Record<string, unknown>;
  const read = message._read;
  delete message._read;
  try {
    decoded(TS.explicitLE);
    throw new Error("decoded without DicomMessage._read");
  } catch (err) {
    const text = String(err);
    assert(text.includes(`dcmjs ${await pinned()} has no DicomMessage._read`), text);
  } finally {
    message._read = read;
  }
});

Deno.test("dcmjs door: DicomMessage._read decodes whole datasets in the three uncompressed syntaxes", () => {
  for (const syntax of [TS.explicitLE, TS.implicitLE, "1.2.840.10008.1.2.2"]) {
    const dict = decoded(syntax);
    same(
      Object.keys(dict),
      ["00080016", "00100010", "0020000D", "00200013", "7FE00010"],
      `the tags of ${syntax}`,
    );
    same(dict["00100010"].Value, [{ Alphabetic: "DOE^JANE" }], `a PN value in ${syntax}`);
    same(dict["00200013"].Value, [7], `an IS value in ${syntax}`);
    same(dict["0020000D"].vr, "UI", `a VR in ${syntax}`);
    same(
      [...new Uint8Array(dict["7FE00010"].Value![0] as ArrayBuffer)],
      [1, 2, 3, 4],
      `binary values in ${syntax}`,
    );
    same("_rawValue" in dict["0020000D"], true, `the raw values in ${syntax}`);
  }
});

Deno.test("dcmjs door: untilTag, includeUntilTagValue and stopOnGreaterTag stop where the gateway expects", () => {
  // untilTag alone: stops at the tag, its element kept without its value.
  const header = decoded(TS.explicitLE, { untilTag: "7FE00010" });
  same(Object.keys(header).at(-1), "7FE00010", "untilTag keeps the element it stops at");
  same(toDicomJson(header)["7FE00010"], { vr: "OW" }, "untilTag leaves the value out");
  // With its value, then stop.
  const through = decoded(TS.explicitLE, { untilTag: "0020000D", includeUntilTagValue: true });
  same(Object.keys(through), ["00080016", "00100010", "0020000D"], "untilTag stops there");
  same(through["0020000D"].Value, ["1.2.3"], "includeUntilTagValue reads the value");
  // A tag the dataset lacks: stop before the first element past it.
  const past = decoded(TS.explicitLE, {
    untilTag: "0020000E",
    includeUntilTagValue: true,
    stopOnGreaterTag: true,
  });
  same(Object.keys(past), ["00080016", "00100010", "0020000D"], "stopOnGreaterTag stops before");
});
