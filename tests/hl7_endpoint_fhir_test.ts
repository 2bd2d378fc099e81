/**
 * The whole path of issue 37 over MLLP: ADT and ORU messages sent by `@medplum/hl7`'s Hl7Client to
 * an `hl7` endpoint, turned into FHIR R4 transaction Bundles by the shipped JOLT transforms
 * (fixtures/transforms/), each feed to its REST receiver, and acknowledged (`CA`, as the fixtures' MSH-15/16 ask).
 */
import { Hl7Message } from "@medplum/core";
import { Hl7Client, ReturnAckCategory } from "@medplum/hl7";
import { ackCodes } from "../gateway/endpoints/hl7/mod.ts";
import { assertEquals } from "./assert.ts";
import { startTestGateway } from "./harness.ts";
import { withCr } from "./support/hl7_samples.ts";
import { freePort, REPO_ROOT } from "./support/mod.ts";

const read = (path: string) => Deno.readTextFile(`${REPO_ROOT}/${path}`);

Deno.test({
  name: "MLLP -> hl7 endpoints -> JOLT to FHIR -> REST receivers, the ACK back",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const got: { path: string; type: string | null; body: Record<string, unknown> }[] = [];
    const rest = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
      got.push({
        path: new URL(req.url).pathname,
        type: req.headers.get("content-type"),
        body: await req.json(),
      });
      return Response.json({ resourceType: "Bundle", type: "transaction-response" });
    });
    const ports = { adt: freePort(), lab: freePort() };
    const gw = await startTestGateway(
      `
transforms_path = "{DIR}/transforms"

[endpoints.adt_feed]
service = "hl7"
[endpoints.adt_feed.options]
bind_addr = "127.0.0.1"
port = ${ports.adt}

[endpoints.lab_feed]
service = "hl7"
[endpoints.lab_feed.options]
bind_addr = "127.0.0.1"
port = ${ports.lab}

[middleware.adt_to_fhir]
type = "transform"
[middleware.adt_to_fhir.options]
spec_path = "hl7_adt_to_fhir.json"

[middleware.oru_to_fhir]
type = "transform"
[middleware.oru_to_fhir.options]
spec_path = "hl7_oru_to_fhir.json"

[backends.ehr]
service = "http"
[backends.ehr.options]
base_url = "http://127.0.0.1:${rest.addr.port}/ehr"

[backends.lab]
service = "http"
[backends.lab.options]
base_url = "http://127.0.0.1:${rest.addr.port}/lab"

[pipelines.adt]
endpoints = ["adt_feed"]
middleware = ["adt_to_fhir"]
backends = ["ehr"]

[pipelines.lab]
endpoints = ["lab_feed"]
middleware = ["oru_to_fhir"]
backends = ["lab"]
`,
      {
        files: {
          "transforms/hl7_adt_to_fhir.json": await read("fixtures/transforms/hl7_adt_to_fhir.json"),
          "transforms/hl7_oru_to_fhir.json": await read("fixtures/transforms/hl7_oru_to_fhir.json"),
        },
      },
    );
    const clients = {
      adt: new Hl7Client({ host: "127.0.0.1", port: ports.adt }),
      lab: new Hl7Client({ host: "127.0.0.1", port: ports.lab }),
    };
    try {
      for (
        const [file, client] of [["adt_a01.hl7", clients.adt], [
          "oru_r01.hl7",
          clients.lab,
        ]] as const
      ) {
        const text = withCr(await read(`fixtures/hl7/${file}`));
        const message = Hl7Message.parse(text);
        // The fixtures ask for enhanced acknowledgement (MSH-15 AL, MSH-16 NE): a commit accept.
        const expected = ackCodes(
          "message",
          message.getSegment("MSH")?.getField(15)?.toString() ?? "",
          message.getSegment("MSH")?.getField(16)?.toString() ?? "",
          "accept",
        );
        const ack = await client.sendAndWait(message, {
          timeoutMs: 10_000,
          returnAck: ReturnAckCategory.FIRST,
        });
        assertEquals(ack.getSegment("MSA")?.getField(1)?.toString(), expected[0], file);
        assertEquals(
          ack.getSegment("MSA")?.getField(2)?.toString(),
          message.getSegment("MSH")?.getField(10)?.toString(),
        );
      }
      assertEquals(got.map((g) => [g.path, g.type, g.body.resourceType, g.body.type]), [
        ["/ehr/", "application/json", "Bundle", "transaction"],
        ["/lab/", "application/json", "Bundle", "transaction"],
      ]);
      const types = (b: Record<string, unknown>) =>
        (b.entry as { resource: { resourceType: string } }[]).map((e) => e.resource.resourceType);
      assertEquals(types(got[0].body).sort(), ["Encounter", "Patient"]);
      assertEquals(types(got[1].body).includes("DiagnosticReport"), true);
      assertEquals(types(got[1].body).includes("Observation"), true);
    } finally {
      await clients.adt.close();
      await clients.lab.close();
      await gw.stop();
      await rest.shutdown();
    }
  },
});
