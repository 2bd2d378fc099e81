/**
 * The dicom_scp endpoint driven by DCMTK's command-line SCUs (echoscu, findscu, getscu, movescu,
 * storescu). The pipeline behind it is a dicom_scu backend to DCMTK `dcmqrscp` seeded with
 * generated instances, so the gateway is a DIMSE proxy: every answer checked here went through
 * RequestEnvelope -> pipeline -> PACS -> ResponseEnvelope -> DIMSE responses.
 */
import { type GeneratedInstance, generateInstances } from "../fixtures/dicom/generate.ts";
import { type DicomPeer, startDcmqrscp, startStorescp } from "../fixtures/dicom/peers.ts";
import { lib, ScuAssociation } from "../gateway/adapters/dimse/mod.ts";
import { JsonDataset } from "../gateway/adapters/dimse/mod.ts";
import { parseP10, SOP, UNCOMPRESSED } from "../gateway/dicom/mod.ts";
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { startHeldUpstream, startTestGateway } from "./harness.ts";
import {
  type CommandResult,
  freePort,
  removeDir,
  requirePeer,
  runCommand,
  tempDir,
  withManagementToken,
} from "./support/mod.ts";

const HAS_DCMTK = requirePeer("DCMTK", "findscu", "dcmtk");

function scpToml(o: {
  port: number;
  echoPort: number;
  qr: DicomPeer;
  dest: DicomPeer;
  storePort: number;
}): string {
  return `
[endpoints.scp]
service = "dicom_scp"
[endpoints.scp.options]
local_aet = "GWSCP"
bind_addr = "127.0.0.1"
port = ${o.port}
enable_find = true
enable_get = true
enable_move = true
enable_store = true
storage_dir = "{DIR}/received"
allowed_calling_aets = ["FINDSCU", "GETSCU", "MOVESCU", "STORESCU", "ECHOSCU", "GWTEST"]

[endpoints.echo_only]
service = "dicom_scp"
[endpoints.echo_only.options]
local_aet = "ECHOONLY"
bind_addr = "127.0.0.1"
port = ${o.echoPort}

[backends.pacs]
service = "dicom_scu"
timeout_secs = 10
[backends.pacs.options]
aet = "${o.qr.aet}"
host = "127.0.0.1"
port = ${o.qr.port}
local_aet = "GATEWAY_SCU"
incoming_store_port = ${o.storePort}

[backends.echo]
service = "echo"

[pipelines.pacs]
endpoints = ["scp"]
backends = ["pacs"]

[pipelines.echo]
endpoints = ["echo_only"]
backends = ["echo"]

[dicom.peers.STORESCP]
host = "127.0.0.1"
port = ${o.dest.port}
`;
}

function dcmtk(cmd: string, args: string[], cwd?: string): Promise<CommandResult> {
  return runCommand(cmd, args, { cwd, timeoutMs: 20_000 });
}

function out(r: CommandResult): string {
  return `${r.stdout}\n${r.stderr}`;
}

/** The values of a tag in findscu's verbose response dumps. */
function dumped(r: CommandResult, tag: string): string[] {
  const re = new RegExp(`^(?:I: )?\\(${tag}\\) \\w\\w \\[([^\\]]*)\\]`, "gm");
  // DCMTK prints a UID's NUL padding; values are compared without it.
  return [...out(r).matchAll(re)].map((m) => m[1].replace(/\0+$/, "").trim());
}

async function filesIn(dir: string): Promise<string[]> {
  const names: string[] = [];
  for await (const e of Deno.readDir(dir)) {
    if (e.isFile) names.push(`${dir}/${e.name}`);
    else if (e.isDirectory) names.push(...await filesIn(`${dir}/${e.name}`));
  }
  return names;
}

async function sopUids(files: string[]): Promise<string[]> {
  const uids: string[] = [];
  for (const f of files) {
    if (!f.endsWith(".dcm") && !/\/[A-Z]{2}\.[0-9.]+$/.test(f)) continue;
    uids.push(parseP10(await Deno.readFile(f)).meta.sopInstanceUid);
  }
  return uids.sort();
}

Deno.test({
  name: "dicom_scp with DCMTK SCUs: echo, find, get, move, store succeed; refusals; reload",
  ignore: !HAS_DCMTK,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async (t) => {
    const dir = await tempDir("dicom-scp-");
    const seeded: GeneratedInstance[] = await generateInstances(`${dir}/seed`, {
      studies: 2,
      seriesPerStudy: 2,
      instancesPerSeries: 2,
      patientPrefix: "SCP",
    });
    const [extra] = await generateInstances(`${dir}/extra`, { patientPrefix: "STORED" });
    const [blocked] = await generateInstances(`${dir}/blocked`, { patientPrefix: "BLOCKED" });
    const storePort = freePort();
    const qr = await startDcmqrscp(seeded.map((i) => i.path), {
      known: [{ aet: "GATEWAY_SCU", port: storePort }],
    });
    const dest = await startStorescp({ aet: "STORESCP" });
    const port = freePort();
    const echoPort = freePort();
    const toml = scpToml({ port, echoPort, qr, dest, storePort });
    const gw = await startTestGateway(toml);
    const host = ["127.0.0.1", String(port)];
    const study = seeded[0];
    try {
      await t.step("echoscu: C-ECHO succeeds", async () => {
        const r = await dcmtk("echoscu", ["-aet", "ECHOSCU", "-aec", "GWSCP", ...host]);
        assertEquals(r.code, 0, out(r));
      });
      await t.step("echoscu: a wrong called AE title is rejected", async () => {
        const r = await dcmtk("echoscu", ["-v", "-aet", "ECHOSCU", "-aec", "NOTUS", ...host]);
        assert(r.code !== 0, out(r));
        assertMatch(out(r), /Called AE Title Not Recognized/i);
      });
      await t.step("echoscu: a calling AE title not in the list is rejected", async () => {
        const r = await dcmtk("echoscu", ["-v", "-aet", "INTRUDER", "-aec", "GWSCP", ...host]);
        assert(r.code !== 0, out(r));
        assertMatch(out(r), /Calling AE Title Not Recognized/i);
      });
      await t.step("findscu: C-FIND at study, series and image level", async () => {
        const studies = await dcmtk("findscu", [
          "-v",
          "-S",
          "-aet",
          "FINDSCU",
          "-aec",
          "GWSCP",
          "-k",
          "QueryRetrieveLevel=STUDY",
          "-k",
          "StudyInstanceUID",
          "-k",
          "PatientID",
          ...host,
        ]);
        assertEquals(studies.code, 0, out(studies));
        assertEquals(
          dumped(studies, "0020,000d").sort(),
          [...new Set(seeded.map((i) => i.studyUid))].sort(),
        );
        const series = await dcmtk("findscu", [
          "-v",
          "-S",
          "-aet",
          "FINDSCU",
          "-aec",
          "GWSCP",
          "-k",
          "QueryRetrieveLevel=SERIES",
          "-k",
          `StudyInstanceUID=${study.studyUid}`,
          "-k",
          "SeriesInstanceUID",
          ...host,
        ]);
        assertEquals(series.code, 0, out(series));
        assertEquals(
          dumped(series, "0020,000e").sort(),
          [...new Set(seeded.filter((i) => i.studyUid === study.studyUid).map((i) => i.seriesUid))]
            .sort(),
        );
        const images = await dcmtk("findscu", [
          "-v",
          "-S",
          "-aet",
          "FINDSCU",
          "-aec",
          "GWSCP",
          "-k",
          "QueryRetrieveLevel=IMAGE",
          "-k",
          `StudyInstanceUID=${study.studyUid}`,
          "-k",
          `SeriesInstanceUID=${study.seriesUid}`,
          "-k",
          "SOPInstanceUID",
          ...host,
        ]);
        assertEquals(images.code, 0, out(images));
        assertEquals(
          dumped(images, "0008,0018").sort(),
          seeded.filter((i) => i.seriesUid === study.seriesUid).map((i) => i.sopInstanceUid).sort(),
        );
      });
      await t.step("getscu: C-GET delivers the study's instances", async () => {
        const into = await tempDir("getscu-");
        const r = await dcmtk("getscu", [
          "-S",
          "-aet",
          "GETSCU",
          "-aec",
          "GWSCP",
          "-od",
          into,
          "-k",
          "QueryRetrieveLevel=STUDY",
          "-k",
          `StudyInstanceUID=${study.studyUid}`,
          ...host,
        ]);
        assertEquals(r.code, 0, out(r));
        assertEquals(
          await sopUids(await filesIn(into)),
          seeded.filter((i) => i.studyUid === study.studyUid).map((i) => i.sopInstanceUid).sort(),
        );
        await removeDir(into);
      });
      await t.step("movescu: C-MOVE stores the series at the destination AE", async () => {
        const r = await dcmtk("movescu", [
          "-v",
          "-S",
          "-aet",
          "MOVESCU",
          "-aec",
          "GWSCP",
          "-aem",
          "STORESCP",
          "-k",
          "QueryRetrieveLevel=SERIES",
          "-k",
          `StudyInstanceUID=${study.studyUid}`,
          "-k",
          `SeriesInstanceUID=${study.seriesUid}`,
          ...host,
        ]);
        assertEquals(r.code, 0, out(r));
        assertEquals(
          await sopUids(await filesIn(dest.dir)),
          seeded.filter((i) => i.seriesUid === study.seriesUid).map((i) => i.sopInstanceUid).sort(),
        );
      });
      await t.step("movescu: an unknown destination is 0xA801", async () => {
        const r = await dcmtk("movescu", [
          "-v",
          "-S",
          "-aet",
          "MOVESCU",
          "-aec",
          "GWSCP",
          "-aem",
          "NOWHERE",
          "-k",
          "QueryRetrieveLevel=STUDY",
          "-k",
          `StudyInstanceUID=${study.studyUid}`,
          ...host,
        ]);
        assertMatch(out(r), /Final Move Response \(Refused: MoveDestinationUnknown\)/);
      });
      await t.step(
        "storescu: C-STORE is written to storage_dir and sent on to the PACS",
        async () => {
          const r = await dcmtk("storescu", [
            "-aet",
            "STORESCU",
            "-aec",
            "GWSCP",
            ...host,
            extra.path,
          ]);
          assertEquals(r.code, 0, out(r));
          const kept = `${gw.dir}/received/${extra.studyUid}/${extra.sopInstanceUid}.dcm`;
          const file = await Deno.readFile(kept);
          assertEquals(parseP10(file).meta.sopInstanceUid, extra.sopInstanceUid);
          const found = await dcmtk("findscu", [
            "-v",
            "-S",
            "-aec",
            qr.aet,
            "-k",
            "QueryRetrieveLevel=STUDY",
            "-k",
            `StudyInstanceUID=${extra.studyUid}`,
            "127.0.0.1",
            String(qr.port),
          ]);
          assertEquals([...new Set(dumped(found, "0020,000d"))], [extra.studyUid], out(found));
        },
      );
      await t.step(
        "storescu: a failed write to storage_dir is Out Of Resources, and the log says so",
        async () => {
          // A file where the study folder must go: the rename into it fails.
          await Deno.writeTextFile(`${gw.dir}/received/${blocked.studyUid}`, "in the way");
          const r = await dcmtk("storescu", [
            "-v",
            "-aet",
            "STORESCU",
            "-aec",
            "GWSCP",
            ...host,
            blocked.path,
          ]);
          assertMatch(out(r), /Received Store Response \(Refused: OutOfResources\)/);
          const line = gw.logs.map((l) => JSON.parse(l)).find((l) =>
            l.msg === "dimse" && l.operation === "C-STORE" && l.status !== "0x0000"
          );
          assertEquals(line?.status, "0xa700", gw.logs.join("\n"));
        },
      );
      await t.step("disabled services are refused (echo-only endpoint)", async () => {
        const echo = await dcmtk("echoscu", ["-aec", "ECHOONLY", "127.0.0.1", String(echoPort)]);
        assertEquals(echo.code, 0, out(echo));
        for (
          const [cmd, args] of [
            ["findscu", ["-S", "-k", "QueryRetrieveLevel=STUDY"]],
            ["getscu", ["-S", "-k", "QueryRetrieveLevel=STUDY", "-k", "StudyInstanceUID=1.2"]],
            ["movescu", ["-S", "-aem", "STORESCP", "-k", "QueryRetrieveLevel=STUDY"]],
            ["storescu", []],
          ] as const
        ) {
          const file = cmd === "storescu" ? [extra.path] : [];
          const r = await dcmtk(cmd, [
            ...args,
            "-aec",
            "ECHOONLY",
            "127.0.0.1",
            String(echoPort),
            ...file,
          ]);
          assert(r.code !== 0, `${cmd} should be refused: ${out(r)}`);
          assertMatch(out(r), /No (Acceptable )?Presentation Context|not supported|no acceptable/i);
        }
      });
      await t.step("reload: a new local_aet takes effect on the same listener", async () => {
        await gw.writeConfig(toml.replace('local_aet = "GWSCP"', 'local_aet = "GWSCP2"'));
        const res = await fetch(`${gw.mgmt}/api/reload`, withManagementToken({ method: "POST" }));
        assertEquals(res.status, 200, await res.text());
        const old = await dcmtk("echoscu", ["-aet", "ECHOSCU", "-aec", "GWSCP", ...host]);
        assert(old.code !== 0, out(old));
        const now = await dcmtk("echoscu", ["-aet", "ECHOSCU", "-aec", "GWSCP2", ...host]);
        assertEquals(now.code, 0, out(now));
      });
      await t.step("reload: a moved port starts the new listener and closes the old", async () => {
        const moved = freePort();
        await gw.writeConfig(toml.replace(`port = ${port}\n`, `port = ${moved}\n`));
        const res = await fetch(`${gw.mgmt}/api/reload`, withManagementToken({ method: "POST" }));
        assertEquals(res.status, 200, await res.text());
        const r = await dcmtk("echoscu", [
          "-aet",
          "ECHOSCU",
          "-aec",
          "GWSCP",
          "127.0.0.1",
          String(moved),
        ]);
        assertEquals(r.code, 0, out(r));
        const gone = await dcmtk("echoscu", ["-aet", "ECHOSCU", "-aec", "GWSCP", ...host]);
        assert(gone.code !== 0, out(gone));
      });
    } finally {
      await gw.stop();
      await qr.stop();
      await dest.stop();
      await removeDir(dir);
    }
  },
});

Deno.test({
  name: "dicom_scp: C-CANCEL stops a running C-FIND with status Cancel",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    // An upstream that holds the query (until the test ends), behind an http backend with a
    // dicom_operation-free route.
    const slow = startHeldUpstream(() => Response.json([]));
    const port = freePort();
    const gw = await startTestGateway(`
[endpoints.scp]
service = "dicom_scp"
[endpoints.scp.options]
local_aet = "GWSCP"
bind_addr = "127.0.0.1"
port = ${port}
enable_find = true
[backends.slow]
service = "http"
[backends.slow.options]
base_url = "${slow.url}"
[pipelines.p]
endpoints = ["scp"]
backends = ["slow"]
`);
    try {
      const assoc = await ScuAssociation.open({
        host: "127.0.0.1",
        port,
        callingAet: "GWTEST",
        calledAet: "GWSCP",
        contexts: [{ abstractSyntax: SOP.studyRootFind, transferSyntaxes: UNCOMPRESSED }],
      });
      const find = new lib.requests.CFindRequest();
      find.setDataset(
        new JsonDataset({ "00080052": { vr: "CS", Value: ["STUDY"] } }, UNCOMPRESSED[0]),
      );
      const pending = assoc.request(find);
      // Cancelled while the query is at the upstream: the Cancel status comes while the upstream
      // still holds it, so the cancel stopped the operation.
      await slow.arrived;
      assoc.cancel(find);
      const final = await pending;
      assertEquals(final.getStatus(), 0xfe00);
      assertEquals(slow.answered, 0, "the cancel did not stop the operation");
      await assoc.release();
    } finally {
      await gw.stop();
      await slow.stop();
    }
  },
});

Deno.test({
  name: "dicom_scp: a pipeline answer that is no DICOM JSON is 0xC000 with an Error Comment",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const port = freePort();
    const gw = await startTestGateway(`
[endpoints.scp]
service = "dicom_scp"
[endpoints.scp.options]
local_aet = "GWSCP"
bind_addr = "127.0.0.1"
port = ${port}
enable_find = true
[backends.echo]
service = "echo"
[pipelines.p]
endpoints = ["scp"]
backends = ["echo"]
`);
    try {
      const assoc = await ScuAssociation.open({
        host: "127.0.0.1",
        port,
        callingAet: "GWTEST",
        calledAet: "GWSCP",
        contexts: [
          { abstractSyntax: SOP.verification, transferSyntaxes: UNCOMPRESSED },
          { abstractSyntax: SOP.studyRootFind, transferSyntaxes: UNCOMPRESSED },
        ],
      });
      assertEquals((await assoc.request(new lib.requests.CEchoRequest())).getStatus(), 0);
      const find = new lib.requests.CFindRequest();
      find.setDataset(
        new JsonDataset({ "00080052": { vr: "CS", Value: ["STUDY"] } }, UNCOMPRESSED[0]),
      );
      const final = await assoc.request(find);
      assertEquals(final.getStatus(), 0xc000);
      assertMatch(final.getErrorComment(), /no DICOM JSON matches/);
      await assoc.release();
    } finally {
      await gw.stop();
    }
  },
});
