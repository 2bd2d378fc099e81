/**
 * Message tracking of DIMSE C-STORE against real DCMTK peers: `storescu` sends an instance to the
 * gateway's `dicom_scp` endpoint, whose pipeline forwards it to `storescp` through a `dicom_scu`
 * backend. The operation is recorded with its DICOM metadata (found by study, SOP instance and
 * patient id), its content shown as a tag table, replayed to `storescp`, and resent with an
 * edited Patient ID, which is what `storescp` then receives.
 */
import { assert, assertEquals } from "./assert.ts";
import { generateInstances } from "../fixtures/dicom/generate.ts";
import { type DicomPeer, startStorescp } from "../fixtures/dicom/peers.ts";
import { startTestGateway } from "./harness.ts";
import { freePort, requirePeer, runCommand, tempDir, waitFor } from "./support/mod.ts";
import { trackingTable, waitForTracked, writeTrackingIdentity } from "./support/tracking.ts";
import { parseP10 } from "../gateway/dicom/mod.ts";
import dcmjs from "dcmjs";

const HAS_DCMTK = requirePeer("DCMTK", "storescp", "dcmtk");

/** The file storescp wrote for an instance, once it is there. */
async function receivedBy(peer: DicomPeer, sopInstanceUid: string): Promise<string> {
  let found: string | undefined;
  await waitFor(async () => {
    for await (const e of Deno.readDir(peer.dir)) {
      if (e.isFile && e.name.endsWith(`.${sopInstanceUid}`)) found = `${peer.dir}/${e.name}`;
    }
    return found !== undefined;
  }, { timeoutMs: 10_000, description: `storescp receiving ${sopInstanceUid}` });
  return found!;
}

function patientIdOf(bytes: Uint8Array): string {
  const dict = dcmjs.data.DicomMessage.readFile(
    bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength),
  ).dict;
  return String(dict["00100020"].Value[0]);
}

Deno.test({
  name:
    "tracking over DIMSE: C-STORE recorded, found, shown as tags, replayed and resent to storescp",
  ignore: !HAS_DCMTK,
  fn: async () => {
    const dir = await tempDir("tracking-dimse-");
    const [instance] = await generateInstances(`${dir}/src`, {
      instancesPerSeries: 1,
      size: 16,
      patientPrefix: "TRK",
    });
    const pacs = await startStorescp({ aet: "PACS" });
    const port = freePort();
    const identity = await writeTrackingIdentity(dir);
    const gw = await startTestGateway(`
[endpoints.scp]
service = "dicom_scp"
[endpoints.scp.options]
local_aet = "GWSCP"
bind_addr = "127.0.0.1"
port = ${port}
enable_store = true

[backends.pacs]
service = "dicom_scu"
timeout_secs = 10
[backends.pacs.options]
aet = "PACS"
host = "127.0.0.1"
port = ${pacs.port}
local_aet = "GATEWAY_SCU"

[pipelines.forward]
endpoints = ["scp"]
backends = ["pacs"]
[pipelines.forward.tracking]
content = ["received", "backend_response"]
${trackingTable(dir, identity)}
`);
    try {
      const sent = await runCommand("storescu", [
        "-aet",
        "MODALITY",
        "-aec",
        "GWSCP",
        "127.0.0.1",
        String(port),
        instance.path,
      ], { timeoutMs: 30_000 });
      assertEquals(sent.code, 0, sent.stderr);
      const first = await receivedBy(pacs, instance.sopInstanceUid);

      type Msg = { id: string; method: string; protocol: string; metadata: Record<string, string> };
      const search = async (q: string) =>
        (await (await gw.mgmtFetch(`/admin/tracking/messages?${q}`)).json()).messages as Msg[];
      const [msg] = await waitForTracked(() => search(`study_uid=${instance.studyUid}`));
      assertEquals(msg.protocol, "dimse");
      assertEquals(msg.method, "C-STORE");
      assertEquals(msg.metadata.calling_aet, "MODALITY");
      assertEquals(msg.metadata.dicom_instance_uid, instance.sopInstanceUid);
      assertEquals((await search(`sop_uid=${instance.sopInstanceUid}`)).length, 1);
      assertEquals((await search(`patient_id=${instance.patientId}`)).length, 1);
      assertEquals((await search(`calling_aet=MODALITY&status=ok`)).length, 1);

      // The instance as a tag table.
      const detail = await (await gw.mgmtFetch(`/admin/tracking/messages/${msg.id}?content=1`))
        .json();
      const received = detail.content.find((s: { stage: string }) => s.stage === "received");
      assertEquals(received.view.kind, "dicom");
      const rows = received.view.tags as { keyword: string; value: string }[];
      assertEquals(rows.find((r) => r.keyword === "PatientID")?.value, instance.patientId);
      assertEquals(
        rows.find((r) => r.keyword === "SOPInstanceUID")?.value,
        instance.sopInstanceUid,
      );
      assert(/bytes$/.test(rows.find((r) => r.keyword === "PixelData")?.value ?? ""));

      // Replay: storescp receives the instance again.
      await Deno.remove(first);
      const replay = await gw.mgmtFetch(`/admin/tracking/messages/${msg.id}/replay`, {
        method: "POST",
        body: "{}",
      });
      const outcome = await replay.json();
      assertEquals(replay.status, 200, JSON.stringify(outcome));
      assertEquals(outcome.status, 200, JSON.stringify(outcome));
      const again = await receivedBy(pacs, instance.sopInstanceUid);
      assertEquals(patientIdOf(await Deno.readFile(again)), instance.patientId);

      // Edit and resend: another Patient ID (same length) in the same instance.
      const original = await Deno.readFile(instance.path);
      const edited = new Uint8Array(original);
      const from = new TextEncoder().encode(instance.patientId);
      const to = new TextEncoder().encode("X".repeat(from.length));
      const at = original.findIndex((_, i) => from.every((b, j) => original[i + j] === b));
      assert(at > 0, "the Patient ID in the file");
      edited.set(to, at);
      assertEquals(parseP10(edited).meta.sopInstanceUid, instance.sopInstanceUid);
      await Deno.remove(again);
      const resend = await gw.mgmtFetch(`/admin/tracking/messages/${msg.id}/resend`, {
        method: "POST",
        body: JSON.stringify({
          body_base64: btoa(String.fromCharCode(...edited)),
          backend: "pacs",
        }),
      });
      const resent = await resend.json();
      assertEquals(resent.status, 200, JSON.stringify(resent));
      const third = await receivedBy(pacs, instance.sopInstanceUid);
      assertEquals(patientIdOf(await Deno.readFile(third)), "X".repeat(from.length));
    } finally {
      await gw.stop();
      await pacs.stop();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  },
});
