/** The parts of C-GET retry passes that need no PACS: their contexts and where they ask. */
import { assertEquals } from "../../../tests/assert.ts";
import type { ScuAssociation } from "../../adapters/dimse/mod.ts";
import { SOP } from "../../dicom/mod.ts";
import { locate, passesOf } from "./get_passes.ts";
import { lookupIdentifier } from "./sop_class_lookup.ts";

const CT = "1.2.840.10008.5.1.4.1.1.2";
const XA_3D = "1.2.840.10008.5.1.4.1.1.13.1.1";
const JPEG = "1.2.840.10008.1.2.4.70";
const JLS = "1.2.840.10008.1.2.4.80";
const ui = (...v: string[]) => ({ vr: "UI", Value: v });

Deno.test("passesOf: per compressed syntax, that syntax alone for every class", () => {
  const UNC = ["1.2.840.10008.1.2.1", "1.2.840.10008.1.2"];
  const models = [
    { abstractSyntax: SOP.studyRootGet, transferSyntaxes: UNC },
    { abstractSyntax: SOP.studyRootFind, transferSyntaxes: UNC },
  ];
  const passes = passesOf({ contexts: [], syntaxes: [JPEG, JLS], classes: [CT, XA_3D] });
  assertEquals(passes, [
    [
      ...models,
      { abstractSyntax: CT, transferSyntaxes: [JPEG], scpRole: true },
      { abstractSyntax: XA_3D, transferSyntaxes: [JPEG], scpRole: true },
    ],
    [
      ...models,
      { abstractSyntax: CT, transferSyntaxes: [JLS], scpRole: true },
      { abstractSyntax: XA_3D, transferSyntaxes: [JLS], scpRole: true },
    ],
  ]);
  assertEquals(passesOf({ contexts: [], syntaxes: [], classes: [CT] }), []);
  const many = Array.from({ length: 200 }, (_, i) => `1.2.3.${i}`);
  assertEquals(passesOf({ contexts: [], syntaxes: [JLS], classes: many })[0].length, 128);
});

Deno.test("locate: a series retrieval asks at IMAGE level, 200 instances per request", async () => {
  const uids = Array.from({ length: 450 }, (_, i) => `1.2.3.${i}`);
  const noPacs = {} as ScuAssociation;
  const found = await locate(noPacs, { "0020000D": ui("1.2"), "0020000E": ui("1.2.3") }, uids);
  assertEquals(found.map((f) => f["00080018"].Value!.length), [200, 200, 50]);
  assertEquals(found[0]["00080052"].Value, ["IMAGE"]);
  assertEquals(found[2]["0020000E"].Value, ["1.2.3"]);
  assertEquals(await locate(noPacs, { "00100020": { vr: "LO", Value: ["P"] } }, uids), []);
});

Deno.test("SOP class lookup: the C-FIND keys of each level; none for a patient or no UID", () => {
  const id = {
    "0020000D": ui("1.2"),
    "0020000E": ui("1.2.3"),
    "00080018": ui("1.2.3.4", "1.2.3.5"),
  };
  const asked = {
    "00080016": { vr: "UI" },
    "00080018": { vr: "UI" },
    "00080052": { vr: "CS", Value: ["IMAGE"] },
    "00083002": { vr: "UI" },
  };
  assertEquals(lookupIdentifier("IMAGE", id), { ...asked, ...id });
  assertEquals(lookupIdentifier("SERIES", id), {
    ...asked,
    "0020000D": ui("1.2"),
    "0020000E": ui("1.2.3"),
  });
  assertEquals(lookupIdentifier("STUDY", id), { ...asked, "0020000D": ui("1.2") });
  assertEquals(lookupIdentifier("PATIENT", { "00100020": { vr: "LO", Value: ["P"] } }), undefined);
  assertEquals(lookupIdentifier("SERIES", { "0020000D": ui("1.2") }), undefined);
});
