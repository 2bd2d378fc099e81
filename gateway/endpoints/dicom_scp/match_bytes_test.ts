/**
 * C-FIND through the gateway (dicom_scp -> pipeline -> dicom_scu -> a PACS of this test): an
 * identifier or a match nothing in the pipeline looked at is forwarded as the very bytes it came
 * in, even ones the gateway would have written differently (Latin-1 text); one a transform
 * changed, or a match given the identifier's level, is encoded again and says so.
 */
import { assert, assertEquals } from "../../../tests/assert.ts";
import { startTestGateway } from "../../../tests/harness.ts";
import { freePort } from "../../../tests/support/mod.ts";
import {
  DimseListener,
  lib,
  type LibResponse,
  negotiate,
  RawDataset,
  ScuAssociation,
} from "../../adapters/dimse/mod.ts";
import {
  type DicomJson,
  fromDicomJson,
  readDataset,
  SOP,
  STATUS,
  toDicomJson,
  TS,
  writeDataset,
} from "../../dicom/mod.ts";

/** Two matches: one with a level, in Latin-1 (not what the gateway writes), one without. */
const MATCHES: DicomJson[] = [
  {
    "00080005": { vr: "CS", Value: ["ISO_IR 100"] },
    "00080052": { vr: "CS", Value: ["STUDY"] },
    "00100010": { vr: "PN", Value: [{ Alphabetic: "Müller^Jörg" }] },
    "0020000D": { vr: "UI", Value: ["1.2.3.4"] },
  },
  {
    "00100020": { vr: "LO", Value: ["P2"] },
    "0020000D": { vr: "UI", Value: ["1.2.3.5"] },
  },
];

/** The identifier the caller sends: Latin-1, as the gateway would not write it. */
const IDENTIFIER = writeDataset(
  fromDicomJson({
    "00080005": { vr: "CS", Value: ["ISO_IR 100"] },
    "00080052": { vr: "CS", Value: ["STUDY"] },
    "00100010": { vr: "PN", Value: [{ Alphabetic: "Müller*" }] },
    "0020000D": { vr: "UI" },
  }),
  TS.explicitLE,
);

/**
 * A PACS answering every C-FIND with MATCHES, encoded by dcmjs; what it sent, per request, and
 * the identifiers it received.
 */
async function pacs(sent: Uint8Array[][], received: Uint8Array[]) {
  return await DimseListener.listen({
    hostname: "127.0.0.1",
    port: 0,
    onConnection(conn) {
      conn.handler = {
        associationRequested(association) {
          negotiate(association, { calledAet: "PACS", services: new Set(["find"]) });
          conn.sendAssociationAccept();
        },
        find(request, reply) {
          received.push((request.getDataset() as RawDataset).bytes.slice());
          const ts = conn.negotiated!.getAcceptedPresentationContextFromRequest(request)!
            .getAcceptedTransferSyntaxUid()!;
          const responses: LibResponse[] = [];
          const bytes: Uint8Array[] = [];
          for (const match of MATCHES) {
            const res = lib.responses.CFindResponse.fromRequest(request);
            res.setStatus(STATUS.pending);
            const encoded = writeDataset(fromDicomJson(match), ts);
            bytes.push(encoded);
            res.setDataset(new RawDataset(encoded, ts));
            responses.push(res);
          }
          const final = lib.responses.CFindResponse.fromRequest(request);
          final.setStatus(STATUS.success);
          sent.push(bytes);
          reply([...responses, final]);
        },
      };
    },
  });
}

/** The matches' bytes a C-FIND to `port` receives, in Explicit VR Little Endian. */
async function find(port: number, calledAet: string): Promise<Uint8Array[]> {
  const assoc = await ScuAssociation.open({
    host: "127.0.0.1",
    port,
    callingAet: "FINDSCU",
    calledAet,
    contexts: [{ abstractSyntax: SOP.studyRootFind, transferSyntaxes: [TS.explicitLE] }],
  });
  try {
    const request = new lib.requests.CFindRequest();
    request.setAffectedSopClassUid(SOP.studyRootFind);
    request.setDataset(new RawDataset(IDENTIFIER, TS.explicitLE));
    const got: Uint8Array[] = [];
    const final = await assoc.request(request, (res) => {
      const dataset = res.getDataset();
      assert(dataset instanceof RawDataset);
      got.push(dataset.bytes.slice());
    });
    assertEquals(final.getStatus(), STATUS.success);
    return got;
  } finally {
    await assoc.release();
  }
}

function json(bytes: Uint8Array): DicomJson {
  return toDicomJson(readDataset(bytes, TS.explicitLE));
}

Deno.test("C-FIND through the gateway: untouched identifiers and matches go on as they came", async () => {
  const sent: Uint8Array[][] = [];
  const received: Uint8Array[] = [];
  const listener = await pacs(sent, received);
  const plain = freePort();
  const transformed = freePort();
  const gw = await startTestGateway(
    `
[endpoints.scp]
service = "dicom_scp"
[endpoints.scp.options]
local_aet = "GWSCP"
bind_addr = "127.0.0.1"
port = ${plain}
enable_find = true

[endpoints.scp_t]
service = "dicom_scp"
[endpoints.scp_t.options]
local_aet = "GWSCPT"
bind_addr = "127.0.0.1"
port = ${transformed}
enable_find = true

[middleware.keep]
type = "transform"
[middleware.keep.options]
spec_path = "keep.json"
apply = "right"

[middleware.ask]
type = "transform"
[middleware.ask.options]
spec_path = "ask.json"
apply = "left"

[backends.pacs]
service = "dicom_scu"
timeout_secs = 10
[backends.pacs.options]
aet = "PACS"
host = "127.0.0.1"
port = ${listener.port}
local_aet = "GW"

[pipelines.plain]
endpoints = ["scp"]
backends = ["pacs"]

[pipelines.transformed]
endpoints = ["scp_t"]
middleware = ["ask", "keep"]
backends = ["pacs"]
`,
    {
      logLevel: "warn",
      files: {
        // Asks for the patient ID too.
        "transforms/ask.json": JSON.stringify([{
          operation: "default",
          spec: { "00100020": { vr: "LO" } },
        }]),
        // Keeps the character set, the level and the study of each match: the name goes.
        "transforms/keep.json": JSON.stringify([{
          operation: "shift",
          spec: {
            "*": {
              "00080005": "[&1].00080005",
              "00080052": "[&1].00080052",
              "0020000D": "[&1].0020000D",
            },
          },
        }]),
      },
    },
  );
  try {
    for (let round = 0; round < 2; round++) {
      const got = await find(plain, "GWSCP");
      // The identifier reached the PACS as the caller sent it.
      assertEquals(received[received.length - 1], IDENTIFIER);
      const [first, second] = sent[sent.length - 1];
      assertEquals(got.length, 2);
      // Byte for byte what the PACS sent, Latin-1 name and all.
      assertEquals(got[0], first);
      // The second had no level: it gets the identifier's, encoded again.
      assert(got[1].byteLength !== second.byteLength);
      assertEquals(json(got[1]), { ...json(second), "00080052": MATCHES[0]["00080052"] });
    }
    // Transforms looked at (and changed) them: encoded from their output.
    const got = await find(transformed, "GWSCPT");
    const asked = json(received[received.length - 1]);
    assertEquals(asked["00100020"], { vr: "LO" });
    assertEquals(asked["00080052"], MATCHES[0]["00080052"]);
    const [first] = sent[sent.length - 1];
    assert(got[0].byteLength !== first.byteLength);
    const changed = json(got[0]);
    assertEquals(changed["00100010"], undefined);
    assertEquals(changed["00080052"], MATCHES[0]["00080052"]);
    assertEquals(changed["0020000D"], MATCHES[0]["0020000D"]);
  } finally {
    await gw.stop();
    await listener.close();
  }
});
