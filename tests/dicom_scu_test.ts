/**
 * The dicom_scu backend against PACS we did not write: DCMTK `dcmqrscp` and Orthanc, each seeded
 * with generated instances. An `http` endpoint in front of the backend turns DICOMweb-shaped paths
 * into C-ECHO, C-FIND (study, series, instance), C-GET, C-MOVE (to the backend's own store SCP) and
 * C-STORE, so each test is one HTTP request and its DIMSE conversation.
 */
import { type GeneratedInstance, generateInstances } from "../fixtures/dicom/generate.ts";
import { type DicomPeer, startDcmqrscp, startOrthanc } from "../fixtures/dicom/peers.ts";
import { boundaryOf, decodeMultipart, parseP10 } from "../gateway/dicom/mod.ts";
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { startTestGateway, type TestGateway } from "./harness.ts";
import {
  freePort,
  removeDir,
  requirePeer,
  tempDir,
  waitFor,
  withManagementToken,
} from "./support/mod.ts";

function gatewayToml(peer: DicomPeer, mode: "get" | "move", storePort: number): string {
  return `
[endpoints.pacs]
service = "http"
[endpoints.pacs.options]
path_prefix = "/pacs"
[backends.pacs]
service = "dicom_scu"
timeout_secs = 10
[backends.pacs.options]
aet = "${peer.aet}"
host = "127.0.0.1"
port = ${peer.port}
local_aet = "GATEWAY_SCU"
dimse_retrieve_mode = "${mode}"
incoming_store_port = ${storePort}
[pipelines.pacs]
endpoints = ["pacs"]
backends = ["pacs"]
`;
}

/** SIGKILLs the child processes of `pid` (read from /proc); returns how many. */
function killChildren(pid: number): number {
  let killed = 0;
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    let stat: string;
    try {
      stat = Deno.readTextFileSync(`/proc/${entry.name}/stat`);
    } catch {
      continue; // gone meanwhile
    }
    // Fields after the ")" closing the command name: state, then the parent pid.
    const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    if (ppid !== pid) continue;
    Deno.kill(Number(entry.name), "SIGKILL");
    killed++;
  }
  return killed;
}

async function json(res: Response): Promise<unknown> {
  const text = await res.text();
  assert(res.headers.get("content-type")?.includes("json"), `not JSON: ${text}`);
  return JSON.parse(text);
}

function uidsOf(matches: unknown, tag: string): string[] {
  return (matches as Record<string, { Value?: unknown[] }>[]).map((m) => String(m[tag]?.Value?.[0]))
    .sort();
}

async function instancesOf(res: Response): Promise<string[]> {
  assertEquals(res.status, 200, await res.clone().text());
  const type = res.headers.get("content-type");
  assertMatch(type ?? "", /^multipart\/related; type="application\/dicom"/);
  const body = new Uint8Array(await res.arrayBuffer());
  return decodeMultipart(body, boundaryOf(type)!).map((p) => parseP10(p.body).meta.sopInstanceUid)
    .sort();
}

/** The checks every PACS must pass; `seeded` are the instances it holds. */
async function exercise(
  t: Deno.TestContext,
  gw: TestGateway,
  seeded: GeneratedInstance[],
  extra: GeneratedInstance,
): Promise<void> {
  const base = `${gw.url}/pacs`;
  const study = seeded[0];
  await t.step("C-ECHO", async () => {
    const res = await fetch(`${base}/echo`);
    const body = await json(res) as Record<string, unknown>;
    assertEquals(res.status, 200);
    assertEquals(body.status, "0x0000");
    assertEquals(res.headers.get("x-dicom-status"), "0x0000");
  });
  await t.step("C-FIND studies (all, by PatientID, limit/offset)", async () => {
    const all = await json(await fetch(`${base}/studies`));
    const studies = [...new Set(seeded.map((i) => i.studyUid))].sort();
    assertEquals(uidsOf(all, "0020000D"), studies);
    const one = await json(await fetch(`${base}/studies?PatientID=${study.patientId}`));
    assertEquals(uidsOf(one, "0020000D"), [study.studyUid]);
    const m = (one as Record<string, { Value?: unknown[] }>[])[0];
    assertEquals(m["00100010"].Value, [{ Alphabetic: study.patientName }]);
    assertEquals(m["00080052"], undefined);
    const page = await json(await fetch(`${base}/studies?limit=1&offset=1`));
    assertEquals((page as unknown[]).length, 1);
  });
  await t.step("C-FIND series and instances of a study", async () => {
    const series = await json(await fetch(`${base}/studies/${study.studyUid}/series`));
    const expectedSeries = [
      ...new Set(seeded.filter((i) => i.studyUid === study.studyUid).map((i) => i.seriesUid)),
    ].sort();
    assertEquals(uidsOf(series, "0020000E"), expectedSeries);
    const inst = await json(
      await fetch(`${base}/studies/${study.studyUid}/series/${study.seriesUid}/instances`),
    );
    const expected = seeded.filter((i) => i.seriesUid === study.seriesUid).map((i) =>
      i.sopInstanceUid
    ).sort();
    assertEquals(uidsOf(inst, "00080018"), expected);
  });
  await t.step("retrieve a study (multipart of Part 10 files)", async () => {
    const res = await fetch(`${base}/studies/${study.studyUid}`);
    const got = await instancesOf(res);
    const expected = seeded.filter((i) => i.studyUid === study.studyUid).map((i) =>
      i.sopInstanceUid
    ).sort();
    assertEquals(got, expected);
    assertEquals(res.headers.get("x-dicom-completed"), String(expected.length));
    assertEquals(res.headers.get("x-dicom-failed"), "0");
  });
  await t.step("retrieve instance metadata as DICOM JSON", async () => {
    const res = await fetch(
      `${base}/studies/${study.studyUid}/series/${study.seriesUid}/instances/${study.sopInstanceUid}/metadata`,
    );
    const meta = await json(res) as Record<string, { vr: string; Value?: unknown[] }>[];
    assertEquals(meta.length, 1);
    assertEquals(meta[0]["00080018"].Value, [study.sopInstanceUid]);
    assertEquals(meta[0]["00280010"].Value, [16]);
    assertEquals(meta[0]["7FE00010"].vr, "OW");
  });
  await t.step("C-STORE, then find what was stored", async () => {
    const file = await Deno.readFile(extra.path);
    const res = await fetch(`${base}/studies`, {
      method: "POST",
      headers: { "content-type": "application/dicom" },
      body: file,
    });
    const body = await json(res) as { status: string; instances: { sop_instance_uid: string }[] };
    assertEquals(res.status, 200, JSON.stringify(body));
    assertEquals(body.status, "0x0000");
    assertEquals(body.instances[0].sop_instance_uid, extra.sopInstanceUid);
    const found = await json(await fetch(`${base}/studies?StudyInstanceUID=${extra.studyUid}`));
    assertEquals(uidsOf(found, "0020000D"), [extra.studyUid]);
  });
  await t.step("unknown study: C-FIND answers no match, retrieve answers no instance", async () => {
    assertEquals(await json(await fetch(`${base}/studies?StudyInstanceUID=1.2.3.4.5`)), []);
    // dcmqrscp answers Success with no sub-operation, Orthanc a failure status: both say "none".
    const res = await fetch(`${base}/studies/1.2.3.4.5`);
    if (res.status === 200) assertEquals(await instancesOf(res), []);
    else {
      const err = await json(res) as { error: { code: string } };
      assertEquals([res.status, err.error.code], [502, "dicom_failure_status"]);
    }
  });
}

async function seed(dir: string) {
  const seeded = await generateInstances(`${dir}/seed`, {
    studies: 2,
    seriesPerStudy: 2,
    instancesPerSeries: 2,
    patientPrefix: "SCU",
  });
  const [extra] = await generateInstances(`${dir}/extra`, { patientPrefix: "NEW" });
  return { seeded, extra };
}

Deno.test({
  name: "dicom_scu against dcmqrscp: echo, find (3 levels), get, metadata, store",
  ignore: !requirePeer("dcmqrscp", "dcmqrscp", "dcmtk"),
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async (t) => {
    const dir = await tempDir("dicom-scu-");
    const { seeded, extra } = await seed(dir);
    const storePort = freePort();
    const qr = await startDcmqrscp(seeded.map((i) => i.path), {
      known: [{ aet: "GATEWAY_SCU", port: storePort }],
    });
    const gw = await startTestGateway(gatewayToml(qr, "get", storePort));
    try {
      await exercise(t, gw, seeded, extra);
    } finally {
      await gw.stop();
      await qr.stop();
      await removeDir(dir);
    }
  },
});

Deno.test({
  name: "dicom_scu against dcmqrscp: C-MOVE to the backend's own store SCP",
  ignore: !requirePeer("dcmqrscp", "dcmqrscp", "dcmtk"),
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const dir = await tempDir("dicom-move-");
    const { seeded } = await seed(dir);
    const storePort = freePort();
    const qr = await startDcmqrscp(seeded.map((i) => i.path), {
      known: [{ aet: "GATEWAY_SCU", port: storePort }],
    });
    const gw = await startTestGateway(gatewayToml(qr, "move", storePort));
    try {
      const s = seeded[0];
      const res = await fetch(`${gw.url}/pacs/studies/${s.studyUid}/series/${s.seriesUid}`);
      const got = await instancesOf(res);
      assertEquals(
        got,
        seeded.filter((i) => i.seriesUid === s.seriesUid).map((i) => i.sopInstanceUid).sort(),
      );
      assertEquals(res.headers.get("x-dicom-status"), "0x0000");
    } finally {
      await gw.stop();
      await qr.stop();
      await removeDir(dir);
    }
  },
});

Deno.test({
  name: "dicom_scu against Orthanc: echo, find (3 levels), get, metadata, store, move",
  ignore: !requirePeer("Orthanc", "Orthanc", "orthanc"),
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async (t) => {
    const dir = await tempDir("dicom-orthanc-");
    const { seeded, extra } = await seed(dir);
    const storePort = freePort();
    const orthanc = await startOrthanc({ known: [{ aet: "GATEWAY_SCU", port: storePort }] });
    const gw = await startTestGateway(gatewayToml(orthanc, "get", storePort));
    try {
      for (const i of seeded) await orthanc.upload(await Deno.readFile(i.path));
      await exercise(t, gw, seeded, extra);
      await t.step("C-MOVE through a move-mode backend", async () => {
        await gw.writeConfig(gatewayToml(orthanc, "move", storePort));
        const r = await fetch(`${gw.mgmt}/api/reload`, withManagementToken({ method: "POST" }));
        await r.body?.cancel();
        const s = seeded[1];
        const res = await fetch(`${gw.url}/pacs/studies/${s.studyUid}`);
        assertEquals(
          await instancesOf(res),
          seeded.filter((i) => i.studyUid === s.studyUid).map((i) => i.sopInstanceUid).sort(),
        );
      });
    } finally {
      await gw.stop();
      await orthanc.stop();
      await removeDir(dir);
    }
  },
});

Deno.test({
  name: "dicom_scu: unreachable PACS is 502 JSON, wrong called AE is a rejected association",
  ignore: !requirePeer("dcmqrscp", "dcmqrscp", "dcmtk"),
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const qr = await startDcmqrscp([]);
    const closed = freePort();
    const toml = gatewayToml({ ...qr, port: closed }, "get", freePort()).replace(
      "[pipelines.pacs]",
      `[endpoints.wrong]
service = "http"
[endpoints.wrong.options]
path_prefix = "/wrong"
[backends.wrong]
service = "dicom_scu"
[backends.wrong.options]
aet = "NOT_QRSCP"
host = "127.0.0.1"
port = ${qr.port}
[pipelines.wrong]
endpoints = ["wrong"]
backends = ["wrong"]
[pipelines.pacs]`,
    );
    const gw = await startTestGateway(toml);
    try {
      const down = await fetch(`${gw.url}/pacs/echo`);
      const e1 = await json(down) as { error: { code: string } };
      assertEquals(down.status, 502);
      assertEquals(e1.error.code, "backend_unavailable");
      const wrong = await fetch(`${gw.url}/wrong/studies`);
      const e2 = await json(wrong) as { error: { code: string; message: string } };
      assertEquals(wrong.status, 502);
      assertEquals(e2.error.code, "dicom_association_rejected");
      assertMatch(e2.error.message, /called AE title not recognized/);
      const bad = await fetch(`${gw.url}/wrong/nothing-here`);
      assertEquals(bad.status, 400);
      await bad.body?.cancel();
    } finally {
      await gw.stop();
      await qr.stop();
    }
  },
});

Deno.test({
  name: "dicom_scu keeps a query association for the next one, and survives the PACS dropping it",
  ignore: !requirePeer("dcmqrscp", "dcmqrscp", "dcmtk"),
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async (t) => {
    const dir = await tempDir("dicom-scu-pool-");
    const { seeded } = await seed(dir);
    const files = seeded.map((i) => i.path);
    const storePort = freePort();
    // -v logs every association dcmqrscp accepts (each is served by a forked child).
    const qr = await startDcmqrscp(files, { args: ["-v"] });
    const received = () => qr.process.output().match(/Association Acknowledged/g)?.length ?? 0;
    // dcmqrscp's log arrives through a pipe: wait for the count, then make sure no more come.
    const associations = async (n: number) => {
      await waitFor(() => Promise.resolve(received() >= n), {
        timeoutMs: 5000,
        description: `${n} associations in dcmqrscp's log`,
      });
      // A check that nothing more comes (the count is the pass condition, reached above): this
      // pause only gives a wrong extra association the time to show; a busy machine can only
      // make it miss one, never fail a right run.
      await new Promise((r) => setTimeout(r, 300));
      assertEquals(received(), n, qr.process.output());
    };
    const queryStudies = async (gw: TestGateway) => {
      const res = await fetch(`${gw.url}/pacs/studies`);
      assertEquals(res.status, 200, await res.clone().text());
      assertEquals((await json(res) as unknown[]).length, 2);
    };
    try {
      await t.step("association_idle_secs = 0 opens one per operation", async () => {
        const toml = gatewayToml(qr, "get", storePort).replace(
          "[backends.pacs.options]",
          "[backends.pacs.options]\nassociation_idle_secs = 0",
        );
        const gw = await startTestGateway(toml);
        try {
          for (let i = 0; i < 2; i++) await queryStudies(gw);
          await associations(2);
        } finally {
          await gw.stop();
        }
      });

      const gw = await startTestGateway(gatewayToml(qr, "get", storePort));
      try {
        await t.step("by default three queries share one association", async () => {
          for (let i = 0; i < 3; i++) await queryStudies(gw);
          await associations(3); // two from the step before
        });

        await t.step("the PACS drops the idle association: the next query opens one", async () => {
          // Kill the child serving the kept association, as a PACS timing it out would end it.
          assertEquals(killChildren(qr.process.child.pid) > 0, true, "no dcmqrscp child to kill");
          await queryStudies(gw);
          await queryStudies(gw);
          await associations(4);
        });
      } finally {
        await gw.stop();
      }
    } finally {
      await qr.stop();
      await removeDir(dir);
    }
  },
});
