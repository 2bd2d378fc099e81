/**
 * Sequence depth is found without recursion, in datasets DCMTK's dump2dcm wrote (explicit and
 * implicit VR, defined and undefined lengths), and a dataset nested past the limit is refused before
 * dcmjs recurses into it (3.6 MB of 100,000 nested sequences held the loop 15.5 s before).
 */
import { assert, assertEquals, assertThrows } from "../../tests/assert.ts";
import { requirePeer } from "../../tests/support/mod.ts";
import { scanHeader } from "../adapters/dimse/header_scan.ts";
import { decodeIdentifier } from "../adapters/dimse/identifier_codec.ts";
import { GatewayError } from "../errors.ts";
import {
  encodeMultipart,
  instancesOfBody,
  MAX_SEQUENCE_DEPTH,
  parseP10,
  readDataset,
  relatedContentType,
  sequenceDepth,
} from "./mod.ts";

const HAS_DCMTK = requirePeer("nesting tests", "dump2dcm", "dcmtk");

/** A dcmdump-style text of a dataset whose ContentSequence nests `depth` levels. */
function nestedDump(depth: number): string {
  const lines = [
    "(0008,0016) UI =SecondaryCaptureImageStorage",
    "(0008,0018) UI [1.2.3.4.5.6.7.8]",
  ];
  for (let i = 0; i < depth; i++) {
    lines.push("(0040,a730) SQ (Sequence with undefined length)", "(fffe,e000) na (Item)");
    lines.push(`(0040,a160) UT [level ${i + 1}]`);
  }
  for (let i = 0; i < depth; i++) {
    lines.push(
      "(fffe,e00d) na (ItemDelimitationItem)",
      "(fffe,e0dd) na (SequenceDelimitationItem)",
    );
  }
  return lines.join("\n") + "\n";
}

/** The dataset bytes and transfer syntax of a file dump2dcm writes from `dump` with `flags`. */
async function written(
  dump: string,
  flags: string[],
): Promise<{ dataset: Uint8Array; syntax: string }> {
  const dir = await Deno.makeTempDir({ prefix: "nesting-" });
  try {
    await Deno.writeTextFile(`${dir}/in.txt`, dump);
    const out = await new Deno.Command("dump2dcm", {
      args: [...flags, `${dir}/in.txt`, `${dir}/out.dcm`],
      stderr: "piped",
    }).output();
    assert(out.success, new TextDecoder().decode(out.stderr));
    const p10 = parseP10(await Deno.readFile(`${dir}/out.dcm`));
    return { dataset: p10.dataset, syntax: p10.meta.transferSyntax };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** dump2dcm's encodings: explicit and implicit VR, defined and undefined lengths. */
const ENCODINGS: [string, string[]][] = [
  ["explicit VR, defined lengths", ["+te", "+e"]],
  ["explicit VR, undefined lengths", ["+te", "-e"]],
  ["implicit VR, defined lengths", ["+ti", "+e"]],
  ["implicit VR, undefined lengths", ["+ti", "-e"]],
  ["explicit VR big endian, defined lengths", ["+tb", "+e"]],
];

Deno.test({
  name: "sequence depth: DCMTK-written datasets, every encoding, at and past the limit",
  ignore: !HAS_DCMTK,
  fn: async () => {
    for (const [how, flags] of ENCODINGS) {
      for (const depth of [0, 1, 3, MAX_SEQUENCE_DEPTH]) {
        const { dataset, syntax } = await written(nestedDump(depth), flags);
        assertEquals(sequenceDepth(dataset, syntax), depth, `${how}, ${depth} levels`);
        // Within the limit dcmjs decodes it, to the innermost level.
        let dict = readDataset(dataset, syntax) as Record<string, { Value?: unknown[] }>;
        for (let level = 1; level <= depth; level++) {
          dict = dict["0040A730"].Value![0] as Record<string, { Value?: unknown[] }>;
        }
        if (depth > 0) assertEquals(dict["0040A160"].Value, [`level ${depth}`], how);
      }
      const { dataset, syntax } = await written(nestedDump(MAX_SEQUENCE_DEPTH + 1), flags);
      assertEquals(sequenceDepth(dataset, syntax), MAX_SEQUENCE_DEPTH + 1, how);
      const err = assertThrows(() => readDataset(dataset, syntax));
      assert(err instanceof GatewayError, String(err));
      assertEquals([err.status, err.code], [422, "dicom_too_deep"], how);
    }
  },
});

/** 100,000 sequences nested with undefined lengths, explicit VR little endian (3.6 MB). */
function deepDataset(depth: number): Uint8Array {
  const bytes = new Uint8Array(depth * 36);
  const view = new DataView(bytes.buffer);
  let at = 0;
  const header = (group: number, element: number, length: number, vr?: string) => {
    view.setUint16(at, group, true);
    view.setUint16(at + 2, element, true);
    if (vr) {
      bytes[at + 4] = vr.charCodeAt(0);
      bytes[at + 5] = vr.charCodeAt(1);
      view.setUint32(at + 8, length, true);
      at += 12;
    } else {
      view.setUint32(at + 4, length, true);
      at += 8;
    }
  };
  for (let i = 0; i < depth; i++) {
    header(0x0040, 0xa730, 0xffffffff, "SQ");
    header(0xfffe, 0xe000, 0xffffffff);
  }
  for (let i = 0; i < depth; i++) {
    header(0xfffe, 0xe00d, 0);
    header(0xfffe, 0xe0dd, 0);
  }
  return bytes;
}

Deno.test("sequence depth: 100,000 nested sequences are refused before any recursion", () => {
  const bytes = deepDataset(100_000);
  const syntax = "1.2.840.10008.1.2.1";
  // The walk stops past the limit; dcmjs is never called (it overflowed its stack after 15 s).
  assertEquals(sequenceDepth(bytes, syntax), MAX_SEQUENCE_DEPTH + 1);
  const err = assertThrows(() => readDataset(bytes, syntax));
  assert(err instanceof GatewayError && err.code === "dicom_too_deep", String(err));
  // The DIMSE header scan (every received instance) gives up instead of overflowing its stack.
  assertEquals(scanHeader(bytes, syntax, [0x0020000d]), undefined);
  assertEquals(scanHeader(deepDataset(3), syntax, [0x0020000d])?.headerEnd, 3 * 36);
  // So does the codec of C-FIND identifiers (a calling AE's bytes): it leaves them to readDataset.
  assertEquals(decodeIdentifier(bytes, syntax), undefined);
  assertEquals(Object.keys(decodeIdentifier(deepDataset(3), syntax)!), ["0040A730"]);
});

/** A DICOM JSON instance whose ContentSequence nests `depth` levels. */
function nestedJson(depth: number): Record<string, unknown> {
  let inner: Record<string, unknown> = { "0040A160": { vr: "UT", Value: ["innermost"] } };
  for (let i = 0; i < depth; i++) inner = { "0040A730": { vr: "SQ", Value: [inner] } };
  return {
    "00080016": { vr: "UI", Value: ["1.2.840.10008.5.1.4.1.1.7"] },
    "00080018": { vr: "UI", Value: ["1.2.3.4"] },
    ...inner,
  };
}

Deno.test("sequence depth: DICOM JSON bodies and multipart nesting are bounded before recursion", () => {
  const json = (v: unknown) => new TextEncoder().encode(JSON.stringify(v));
  const [ok] = instancesOfBody(json(nestedJson(MAX_SEQUENCE_DEPTH)), "application/dicom+json");
  assertEquals(sequenceDepth(ok.dataset, ok.meta.transferSyntax), MAX_SEQUENCE_DEPTH);
  // 10,000 levels: refused by the JSON depth scan, not by a stack overflow in the encoder.
  const deep = assertThrows(() =>
    instancesOfBody(json(nestedJson(10_000)), "application/dicom+json")
  );
  assert(deep instanceof GatewayError && deep.code === "nesting_too_deep", String(deep));
  // A multipart part holding another multipart body.
  const inner = encodeMultipart(
    [{ contentType: "application/dicom", body: new Uint8Array(4) }],
    "b2",
  );
  const outer = encodeMultipart(
    [{ contentType: relatedContentType("b2"), body: inner }],
    "b1",
  );
  const nested = assertThrows(() => instancesOfBody(outer, relatedContentType("b1")));
  assertEquals((nested as Error).message, "a multipart part holds another multipart body");
});
