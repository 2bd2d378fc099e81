/**
 * Modality worklist through the gateway: DCMTK `findscu -W` (the modality) asks a `dicom_scp`
 * endpoint on the Modality Worklist Information Model (1.2.840.10008.5.1.4.31), whose pipeline's
 * `dicom_scu` backend asks DCMTK `wlmscpfs` (the worklist SCP, its items made with `dump2dcm` from
 * fixtures/worklist/ at test time). Each answer is compared, data set by data set and byte for
 * byte, with what `findscu -W` gets asking wlmscpfs directly. Then a FHIR ServiceRequest mapped by
 * fixtures/transforms/fhir_service_request_to_worklist.json becomes a worklist item the modality
 * finds through the gateway, and the worklist's answers become FHIR R4 ImagingStudy resources
 * (status registered) with fixtures/transforms/worklist_item_to_fhir_imaging_study.json, checked
 * against HL7's R4 JSON schema.
 */
import { parseSpec } from "../shared/jolt/mod.ts";
import { type DicomJson, readDataset, toDicomJson, TS } from "../gateway/dicom/mod.ts";
import { assert, assertEquals } from "./assert.ts";
import { startTestGateway, type TestGateway } from "./harness.ts";
import { freePort, REPO_ROOT, requirePeer } from "./support/mod.ts";
import { fhirR4Validator } from "./support/fhir_r4.ts";
import {
  findscuWorklist,
  startWlmscpfs,
  type WorklistAnswer,
  type WorklistScp,
} from "./support/worklist.ts";

const HAS_DCMTK = requirePeer("DCMTK", "wlmscpfs", "dcmtk");

const ITEMS = ["item_ct_chest.dump", "item_ct_head.dump", "item_mr_knee.dump"];

/** A dicom_scp endpoint (C-FIND only) whose pipeline asks the worklist SCP `wl`. */
function worklistToml(port: number, wl: WorklistScp): string {
  return `
[endpoints.worklist]
service = "dicom_scp"
[endpoints.worklist.options]
local_aet = "GWWORKLIST"
bind_addr = "127.0.0.1"
port = ${port}
enable_find = true
allowed_calling_aets = ["MODALITY"]

[backends.ris]
service = "dicom_scu"
timeout_secs = 10
[backends.ris.options]
aet = "${wl.aet}"
host = "127.0.0.1"
port = ${wl.port}
local_aet = "GATEWAY"

[pipelines.worklist]
endpoints = ["worklist"]
backends = ["ris"]
`;
}

/** The answers' data sets as DICOM JSON (for messages and field checks). */
function asJson(answer: WorklistAnswer): DicomJson[] {
  return answer.datasets.map((d) => toDicomJson(readDataset(d, TS.explicitLE)));
}

/** First value of `tag` (PN: Alphabetic), or of `tag` in the first item of sequence `seq`. */
function value(item: DicomJson, tag: string, seq?: string): unknown {
  const holder = seq ? (item[seq]?.Value?.[0] as DicomJson | undefined) : item;
  const v = holder?.[tag]?.Value?.[0];
  return typeof v === "object" && v !== null && "Alphabetic" in v
    ? (v as { Alphabetic: string }).Alphabetic
    : v;
}

/** Asserts both answers completed and hold the same data sets, byte for byte, in order. */
function assertSameAnswers(direct: WorklistAnswer, via: WorklistAnswer, expected: number): void {
  assertEquals(direct.code, 0, direct.output);
  assertEquals(via.code, 0, via.output);
  assertEquals(direct.datasets.length, expected, direct.output);
  assertEquals(
    via.datasets.length,
    direct.datasets.length,
    `through the gateway: ${JSON.stringify(asJson(via))}\ndirect: ${
      JSON.stringify(asJson(direct))
    }`,
  );
  for (const [i, d] of direct.datasets.entries()) {
    assertEquals(
      via.datasets[i],
      d,
      `response ${i + 1} differs:\n${JSON.stringify(asJson(via)[i])}\n${
        JSON.stringify(asJson(direct)[i])
      }`,
    );
  }
}

Deno.test({
  name: "findscu -W through dicom_scp -> dicom_scu -> wlmscpfs answers what wlmscpfs answers",
  ignore: !HAS_DCMTK,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async (t) => {
    const wl = await startWlmscpfs(ITEMS);
    const port = freePort();
    let gw: TestGateway | undefined;
    try {
      gw = await startTestGateway(worklistToml(port, wl));
      await t.step("station CT01: its two CT steps, byte for byte as asked directly", async () => {
        const direct = await findscuWorklist(wl.port, wl.aet, "query_ct01.dump");
        const via = await findscuWorklist(port, "GWWORKLIST", "query_ct01.dump");
        assertSameAnswers(direct, via, 2);
        const accessions = asJson(via).map((m) => value(m, "00080050")).sort();
        assertEquals(accessions, ["ACC-2026-0001", "ACC-2026-0003"]);
        // The requested procedure code sequence of the chest CT came through, item and all.
        const chest = asJson(via).find((m) => value(m, "00080050") === "ACC-2026-0001")!;
        assertEquals(value(chest, "00080100", "00321064"), "CTCHESTC");
        assertEquals(value(chest, "00400002", "00400100"), "20260301");
      });
      await t.step("station MR01: the knee MR", async () => {
        const direct = await findscuWorklist(wl.port, wl.aet, "query_mr01.dump");
        const via = await findscuWorklist(port, "GWWORKLIST", "query_mr01.dump");
        assertSameAnswers(direct, via, 1);
        assertEquals(value(asJson(via)[0], "00100010"), "ROE^RICHARD");
      });
      await t.step("no scheduled step matches: no pending response, success", async () => {
        const direct = await findscuWorklist(wl.port, wl.aet, "query_none.dump");
        const via = await findscuWorklist(port, "GWWORKLIST", "query_none.dump");
        assertSameAnswers(direct, via, 0);
      });
      await t.step("the pipeline saw a C-FIND on the worklist model", async () => {
        const metrics = await (await gw!.mgmtFetch("/metrics")).text();
        assert(metrics.includes('pipeline="worklist"'), metrics.slice(0, 2000));
      });
    } finally {
      await gw?.stop();
      await wl.stop();
    }
  },
});

Deno.test({
  name: "FHIR ServiceRequest -> worklist item (JOLT) found by findscu -W -> FHIR ImagingStudy",
  ignore: !HAS_DCMTK,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const read = (path: string) => Deno.readTextFile(`${REPO_ROOT}/${path}`);
    const spec = parseSpec(await read("fixtures/transforms/fhir_service_request_to_worklist.json"));
    const order = JSON.parse(await read("fixtures/worklist/service_request.json"));
    const item = spec.apply(order) as DicomJson;
    // The mapping, field by field (docs/dicom.md's table).
    assertEquals(value(item, "00080050"), "ACC-2026-0101");
    assertEquals(value(item, "0020000D"), "1.2.826.0.1.3680043.10.1138.2.1");
    assertEquals(value(item, "00100010"), "DOE^JOHN");
    assertEquals(value(item, "00100020"), "PID-2001");
    assertEquals(value(item, "00100030"), "19751102");
    assertEquals(value(item, "00100040"), "M");
    assertEquals(value(item, "00080090"), "HOUSE^GREGORY");
    assertEquals(value(item, "00321060"), "CT CHEST WITHOUT CONTRAST");
    assertEquals(value(item, "00080100", "00321064"), "24627-2");
    assertEquals(value(item, "00080102", "00321064"), "LN");
    assertEquals(value(item, "00401001"), "RP-2001");
    assertEquals(value(item, "00401003"), "HIGH");
    assertEquals(value(item, "00080060", "00400100"), "CT");
    assertEquals(value(item, "00400001", "00400100"), "CT01");
    assertEquals(value(item, "00400002", "00400100"), "20260301");
    assertEquals(value(item, "00400003", "00400100"), "144500");
    assertEquals(value(item, "00400007", "00400100"), "CT Chest");
    assertEquals(value(item, "00400009", "00400100"), "RP-2001");
    assertEquals(value(item, "00400020", "00400100"), "SCHEDULED");

    const wl = await startWlmscpfs(["item_ct_head.dump"]);
    const port = freePort();
    let gw: TestGateway | undefined;
    try {
      await wl.addItem("service_request", item);
      gw = await startTestGateway(worklistToml(port, wl));
      const direct = await findscuWorklist(wl.port, wl.aet, "query_ct01.dump");
      const via = await findscuWorklist(port, "GWWORKLIST", "query_ct01.dump");
      assertSameAnswers(direct, via, 2);
      const found = asJson(via).find((m) => value(m, "00080050") === "ACC-2026-0101");
      assert(found, `the ordered CT is not on the worklist: ${JSON.stringify(asJson(via))}`);
      assertEquals(value(found, "00100010"), "DOE^JOHN");
      assertEquals(value(found, "00400003", "00400100"), "144500");
      assertEquals(value(found, "0020000D"), "1.2.826.0.1.3680043.10.1138.2.1");

      // The other side: each answer as a FHIR ImagingStudy to be (status registered), based on
      // the order by its requested procedure id.
      const toStudy = parseSpec(
        await read("fixtures/transforms/worklist_item_to_fhir_imaging_study.json"),
      );
      const validate = await fhirR4Validator();
      const studies = asJson(via).map((m) => toStudy.apply(m) as Record<string, unknown>);
      for (const study of studies) assertEquals(validate(study), [], JSON.stringify(study));
      const ordered = studies.find((s) => JSON.stringify(s).includes("ACC-2026-0101"))!;
      assertEquals(ordered, {
        resourceType: "ImagingStudy",
        status: "registered",
        identifier: [
          { system: "urn:dicom:uid", value: "urn:oid:1.2.826.0.1.3680043.10.1138.2.1" },
          {
            type: {
              coding: [{ system: "http://terminology.hl7.org/CodeSystem/v2-0203", code: "ACSN" }],
            },
            value: "ACC-2026-0101",
          },
        ],
        subject: { identifier: { value: "PID-2001" }, display: "DOE^JOHN" },
        basedOn: [{ type: "ServiceRequest", identifier: { value: "RP-2001" } }],
        modality: [{ system: "http://dicom.nema.org/resources/ontology/DCM", code: "CT" }],
        description: "CT CHEST WITHOUT CONTRAST",
        referrer: { display: "HOUSE^GREGORY" },
        procedureCode: [{ coding: [{ code: "24627-2", display: "CT Chest" }] }],
      });
    } finally {
      await gw?.stop();
      await wl.stop();
    }
  },
});
