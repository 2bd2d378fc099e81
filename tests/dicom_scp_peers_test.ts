/**
 * `dicom_scp` per calling AE (`peers`), with DCMTK's SCUs: a modality may only store, a viewer may
 * find and move to itself only (no storage contexts, a C-MOVE elsewhere refused with 0124H), an AE
 * allowed C-GET gets storage contexts for the sub-operations yet its C-STORE is refused (0124H),
 * and an AE not listed cannot associate. Every operation, allowed or refused, is in the audit trail
 * with its calling AE, SOP class and instance.
 */
import { generateInstances } from "../fixtures/dicom/generate.ts";
import { startDcmqrscp, startStorescp } from "../fixtures/dicom/peers.ts";
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { startTestGateway } from "./harness.ts";
import {
  type CommandResult,
  freePort,
  removeDir,
  requirePeer,
  runCommand,
  tempDir,
  waitFor,
} from "./support/mod.ts";

const HAS_DCMTK = requirePeer("DCMTK", "findscu", "dcmtk");

const out = (r: CommandResult) => `${r.stdout}\n${r.stderr}`;

Deno.test({
  name: "dicom_scp peers: services and move destinations per calling AE, with DCMTK",
  ignore: !HAS_DCMTK,
  fn: async () => {
    const dir = await tempDir("scp-peers-");
    const seeded = await generateInstances(`${dir}/seed`, { patientPrefix: "PEERS" });
    const [extra] = await generateInstances(`${dir}/extra`, { patientPrefix: "NEW" });
    const qr = await startDcmqrscp(seeded.map((i) => i.path), { aet: "QRSCP" });
    const viewer = await startStorescp({ aet: "VIEWER" });
    const other = await startStorescp({ aet: "OTHER" });
    const port = freePort();
    const gw = await startTestGateway(`
[endpoints.scp]
service = "dicom_scp"
[endpoints.scp.options]
local_aet = "GWSCP"
bind_addr = "127.0.0.1"
port = ${port}
enable_find = true
enable_get = true
enable_move = true
enable_store = true
[endpoints.scp.options.peers.MODALITY1]
services = ["echo", "store"]
[endpoints.scp.options.peers.GETTER]
services = ["echo", "get"]
[endpoints.scp.options.peers.VIEWER]
services = ["echo", "find", "move"]
move_destinations = ["VIEWER"]

[backends.pacs]
service = "dicom_scu"
timeout_secs = 10
[backends.pacs.options]
aet = "QRSCP"
host = "127.0.0.1"
port = ${qr.port}

[pipelines.dimse]
endpoints = ["scp"]
backends = ["pacs"]

[dicom.peers.VIEWER]
host = "127.0.0.1"
port = ${viewer.port}
[dicom.peers.OTHER]
host = "127.0.0.1"
port = ${other.port}

[audit]
file = "audit.jsonl"
flush_interval_ms = 20
`);
    const host = ["127.0.0.1", String(port)];
    const scu = (cmd: string, aet: string, args: string[], files: string[] = []) =>
      runCommand(cmd, ["-aet", aet, "-aec", "GWSCP", ...args, ...host, ...files], {
        timeoutMs: 20_000,
      });
    const study = seeded[0];
    const move = (aet: string, dest: string) =>
      scu("movescu", aet, [
        "-v",
        "-S",
        "-aem",
        dest,
        "-k",
        "QueryRetrieveLevel=STUDY",
        "-k",
        `StudyInstanceUID=${study.studyUid}`,
      ]);
    try {
      // The modality stores; it cannot query.
      const stored = await scu("storescu", "MODALITY1", [], [extra.path]);
      assertEquals(stored.code, 0, out(stored));
      const modalityFind = await scu("findscu", "MODALITY1", [
        "-S",
        "-k",
        "QueryRetrieveLevel=STUDY",
      ]);
      assert(modalityFind.code !== 0, out(modalityFind));
      assertMatch(
        out(modalityFind),
        /No Acceptable Presentation Contexts|no presentation context/i,
      );

      // The viewer queries and moves to itself, not elsewhere, and cannot store.
      const viewerFind = await scu("findscu", "VIEWER", [
        "-S",
        "-k",
        "QueryRetrieveLevel=STUDY",
        "-k",
        "StudyInstanceUID",
      ]);
      assertEquals(viewerFind.code, 0, out(viewerFind));
      const toViewer = await move("VIEWER", "VIEWER");
      assertEquals(toViewer.code, 0, out(toViewer));
      const toOther = await move("VIEWER", "OTHER");
      assertMatch(out(toOther), /Status: 0x0?124/i);
      const viewerStore = await scu("storescu", "VIEWER", [], [extra.path]);
      assertMatch(out(viewerStore), /No Acceptable Presentation Contexts/i);
      // An AE allowed C-GET has storage contexts (for the sub-operations), yet may not store.
      const getterStore = await scu("storescu", "GETTER", ["-v"], [extra.path]);
      assertMatch(out(getterStore), /Status: 0x0?124|Unknown Status: 0x124/i);

      // An AE not listed cannot associate.
      const stranger = await scu("echoscu", "STRANGER", []);
      assert(stranger.code !== 0, out(stranger));
      assertMatch(out(stranger), /Association Rejected|Calling AE Title Not Recognized/i);

      // The audit trail: one record per operation, refusals included.
      const trail = async () =>
        (await Deno.readTextFile(`${gw.dir}/audit.jsonl`).catch(() => "")).trimEnd().split("\n")
          .filter((l) => l !== "").map((l) => JSON.parse(l));
      await waitFor(async () => (await trail()).length >= 5, {
        timeoutMs: 5000,
        description: "five DIMSE audit records",
      });
      const records = (await trail()).map((r) =>
        [r.dicom_calling_aet, r.method, r.dicom_status, r.outcome].join(" ")
      );
      assertEquals(records, [
        "MODALITY1 C-STORE 0x0000 success",
        "VIEWER C-FIND 0x0000 success",
        "VIEWER C-MOVE 0x0000 success",
        "VIEWER C-MOVE 0x0124 failure",
        "GETTER C-STORE 0x0124 failure",
      ]);
      const [store, , , refusedMove, refusedStore] = await trail();
      assertEquals(
        [store.dicom_sop_instance, store.dicom_sop_class, store.dicom_study_uid],
        [extra.sopInstanceUid, extra.sopClassUid, extra.studyUid],
      );
      assertEquals([store.protocol, store.endpoint, store.dicom_called_aet], [
        "dimse",
        "scp",
        "GWSCP",
      ]);
      assertEquals(refusedMove.error_code, "dimse_not_authorized");
      assertEquals(refusedStore.dicom_sop_instance, extra.sopInstanceUid);
    } finally {
      await gw.stop();
      await qr.stop();
      await viewer.stop();
      await other.stop();
      await removeDir(dir);
    }
  },
});
