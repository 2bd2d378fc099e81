/**
 * DICOMweb against Orthanc with its DICOMweb plugin (Debian orthanc-dicomweb): the `dicomweb`
 * endpoint forwarding to the `dicomweb` backend, the same endpoint bridged to a `dicom_scu`
 * backend (QIDO -> C-FIND at every level, WADO -> C-GET, frames, STOW -> C-STORE), a dicom_scp
 * endpoint whose pipeline speaks DICOMweb, and SPEC's 501 baseline for pipelines that cannot
 * serve DICOMweb.
 */
import { type GeneratedInstance, generateInstances } from "../fixtures/dicom/generate.ts";
import { type OrthancPeer, requireDicomwebPlugin, startOrthanc } from "../fixtures/dicom/peers.ts";
import {
  boundaryOf,
  decodeMultipart,
  encodeMultipart,
  newBoundary,
  parseP10,
  relatedContentType,
} from "../gateway/dicom/mod.ts";
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { startTestGateway, type TestGateway } from "./harness.ts";
import { freePort, removeDir, requirePeer, runCommand, tempDir } from "./support/mod.ts";

const HAS_ORTHANC = requirePeer("Orthanc", "Orthanc", "orthanc") && requireDicomwebPlugin();

type Json = Record<string, { vr: string; Value?: unknown[] }>;

function toml(orthanc: OrthancPeer, scpPort: number): string {
  return `
[endpoints.web]
service = "dicomweb"
[endpoints.web.options]
path_prefix = "/web"

[endpoints.bridge]
service = "dicomweb"
[endpoints.bridge.options]
path_prefix = "/bridge"

[endpoints.baseline]
service = "dicomweb"
[endpoints.baseline.options]
path_prefix = "/baseline"

[endpoints.scp]
service = "dicom_scp"
[endpoints.scp.options]
local_aet = "GWWEB"
bind_addr = "127.0.0.1"
port = ${scpPort}
enable_find = true
enable_get = true
enable_store = true

[backends.orthanc_web]
service = "dicomweb"
[backends.orthanc_web.options]
base_url = "${orthanc.dicomweb}"

[backends.orthanc_dimse]
service = "dicom_scu"
[backends.orthanc_dimse.options]
aet = "${orthanc.aet}"
host = "127.0.0.1"
port = ${orthanc.port}

[backends.echo]
service = "echo"

[pipelines.web]
endpoints = ["web", "scp"]
backends = ["orthanc_web"]

[pipelines.bridge]
endpoints = ["bridge"]
backends = ["orthanc_dimse"]

[pipelines.baseline]
endpoints = ["baseline"]
backends = ["echo"]
`;
}

async function json(res: Response): Promise<unknown> {
  const text = await res.text();
  assertMatch(res.headers.get("content-type") ?? "", /json/, `${res.status} ${text}`);
  return JSON.parse(text);
}

function values(list: unknown, tag: string): string[] {
  return (list as Json[]).map((m) => String(m[tag]?.Value?.[0])).sort();
}

async function multipartUids(res: Response): Promise<string[]> {
  const type = res.headers.get("content-type") ?? "";
  assertEquals(res.status, 200, await res.clone().text());
  assertMatch(type, /^multipart\/related/);
  const parts = decodeMultipart(new Uint8Array(await res.arrayBuffer()), boundaryOf(type)!);
  return parts.map((p) => parseP10(p.body).meta.sopInstanceUid).sort();
}

/** QIDO, WADO metadata and instances, STOW through a DICOMweb endpoint at `base`. */
async function exercise(
  t: Deno.TestContext,
  base: string,
  seeded: GeneratedInstance[],
  stow: GeneratedInstance[],
): Promise<void> {
  const s = seeded[0];
  await t.step("QIDO-RS studies, series, instances (DICOM JSON)", async () => {
    const studies = await json(await fetch(`${base}/studies?PatientID=${s.patientId}`));
    assertEquals(values(studies, "0020000D"), [s.studyUid]);
    assertEquals((studies as Json[])[0]["00100010"].Value, [{ Alphabetic: s.patientName }]);
    const series = await json(await fetch(`${base}/studies/${s.studyUid}/series`));
    assertEquals(
      values(series, "0020000E"),
      [...new Set(seeded.filter((i) => i.studyUid === s.studyUid).map((i) => i.seriesUid))].sort(),
    );
    const inst = await json(
      await fetch(`${base}/studies/${s.studyUid}/series/${s.seriesUid}/instances`),
    );
    assertEquals(
      values(inst, "00080018"),
      seeded.filter((i) => i.seriesUid === s.seriesUid).map((i) => i.sopInstanceUid).sort(),
    );
  });
  await t.step("QIDO-RS /studies/{study}/instances, /series, /instances", async () => {
    // dicomweb-client's searchForInstances and searchForSeries ask these; the whole route table
    // is checked in tests/dicom_web_routes_test.ts.
    const ofPatient = seeded.filter((i) => i.patientId === s.patientId);
    const ofStudy = await json(await fetch(`${base}/studies/${s.studyUid}/instances`));
    assertEquals(
      values(ofStudy, "00080018"),
      seeded.filter((i) => i.studyUid === s.studyUid).map((i) => i.sopInstanceUid).sort(),
    );
    const series = await json(await fetch(`${base}/series?PatientID=${s.patientId}`));
    assertEquals(
      values(series, "0020000E"),
      [...new Set(ofPatient.map((i) => i.seriesUid))].sort(),
    );
    const instances = await json(await fetch(`${base}/instances?PatientID=${s.patientId}`));
    assertEquals(values(instances, "00080018"), ofPatient.map((i) => i.sopInstanceUid).sort());
  });
  await t.step("WADO-RS metadata (DICOM JSON)", async () => {
    const meta = await json(await fetch(`${base}/studies/${s.studyUid}/metadata`)) as Json[];
    assertEquals(
      values(meta, "00080018"),
      seeded.filter((i) => i.studyUid === s.studyUid).map((i) => i.sopInstanceUid).sort(),
    );
    assertEquals(meta[0]["00280010"].Value, [16]);
  });
  await t.step("WADO-RS instance and series (multipart/related application/dicom)", async () => {
    const one = await fetch(
      `${base}/studies/${s.studyUid}/series/${s.seriesUid}/instances/${s.sopInstanceUid}`,
      { headers: { accept: 'multipart/related; type="application/dicom"' } },
    );
    assertEquals(await multipartUids(one), [s.sopInstanceUid]);
    const series = await fetch(`${base}/studies/${s.studyUid}/series/${s.seriesUid}`, {
      headers: { accept: 'multipart/related; type="application/dicom"' },
    });
    assertEquals(
      await multipartUids(series),
      seeded.filter((i) => i.seriesUid === s.seriesUid).map((i) => i.sopInstanceUid).sort(),
    );
  });
  await t.step("STOW-RS (multipart/related), then QIDO finds it", async () => {
    const boundary = newBoundary();
    const parts = await Promise.all(
      stow.map(async (i) => ({
        contentType: "application/dicom",
        body: await Deno.readFile(i.path),
      })),
    );
    const res = await fetch(`${base}/studies`, {
      method: "POST",
      headers: { "content-type": relatedContentType(boundary), accept: "application/dicom+json" },
      body: encodeMultipart(parts, boundary) as BodyInit,
    });
    const body = await json(res) as Json;
    assertEquals(res.status, 200, JSON.stringify(body));
    const refs = (body["00081199"].Value as Json[]).map((r) => String(r["00081155"].Value?.[0]));
    assertEquals(refs.sort(), stow.map((i) => i.sopInstanceUid).sort());
    // Retrieve URLs name the gateway, never the origin behind it, and they work (PS3.18 10.5.3).
    assertEquals(body["00081190"].Value, [`${base}/studies/${stow[0].studyUid}`]);
    for (const item of body["00081199"].Value as Json[]) {
      const sop = String(item["00081155"].Value?.[0]);
      const stored = stow.find((i) => i.sopInstanceUid === sop)!;
      const url = `${base}/studies/${stored.studyUid}/series/${stored.seriesUid}/instances/${sop}`;
      assertEquals(item["00081190"].Value, [url]);
    }
    const first = String((body["00081199"].Value as Json[])[0]["00081190"].Value?.[0]);
    const back = await fetch(first, {
      headers: { accept: 'multipart/related; type="application/dicom"' },
    });
    assertEquals(back.status, 200);
    assertEquals((await multipartUids(back)).length, 1);
    const found = await json(await fetch(`${base}/studies?StudyInstanceUID=${stow[0].studyUid}`));
    assertEquals(values(found, "0020000D"), [stow[0].studyUid]);
    for (const url of (found as Json[]).flatMap((r) => r["00081190"]?.Value ?? [])) {
      assert(String(url).startsWith(`${base}/studies/`), String(url));
    }
  });
}

Deno.test({
  name: "DICOMweb against Orthanc: dicomweb backend, dicom_scu bridge, dicom_scp over DICOMweb",
  ignore: !HAS_ORTHANC,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async (t) => {
    const dir = await tempDir("dicomweb-");
    const seeded = await generateInstances(`${dir}/seed`, {
      studies: 2,
      seriesPerStudy: 2,
      instancesPerSeries: 2,
      patientPrefix: "WEB",
    });
    const stowA = await generateInstances(`${dir}/a`, {
      instancesPerSeries: 2,
      patientPrefix: "STOWA",
    });
    const stowB = await generateInstances(`${dir}/b`, {
      instancesPerSeries: 2,
      patientPrefix: "STOWB",
    });
    const [viaScp] = await generateInstances(`${dir}/c`, { patientPrefix: "VIASCP" });
    // Orthanc answers DIMSE queries only from AEs it knows: the bridge calls as GATEWAY_SCU.
    const orthanc = await startOrthanc({
      dicomweb: true,
      known: [{ aet: "GATEWAY_SCU", port: freePort() }],
    });
    const scpPort = freePort();
    let gw: TestGateway | undefined;
    try {
      for (const i of seeded) await orthanc.upload(await Deno.readFile(i.path));
      gw = await startTestGateway(toml(orthanc, scpPort));
      const g = gw;
      await t.step("forwarded to the dicomweb backend", async (t) => {
        await exercise(t, `${g.url}/web`, seeded, stowA);
      });
      await t.step("bridged to the dicom_scu backend", async (t) => {
        await exercise(t, `${g.url}/bridge`, seeded, stowB);
        const missing = await fetch(
          `${g.url}/bridge/studies/1.2.3.4/series/1.2.3.4.5/instances/1.2.3.4.5.6`,
        );
        assert(missing.status === 404 || missing.status === 502, String(missing.status));
        await missing.body?.cancel();
        // Frames are bridged too (tests/dicom_web_frames_test.ts has the details): the frame of
        // this single-frame instance equals what Orthanc's DICOMweb plugin serves.
        const instance = `/studies/${seeded[0].studyUid}/series/${seeded[0].seriesUid}/instances/${
          seeded[0].sopInstanceUid
        }/frames/1`;
        const accept = { accept: 'multipart/related; type="application/octet-stream"' };
        const [bridged, forwarded] = await Promise.all(
          [`${g.url}/bridge${instance}`, `${g.url}/web${instance}`].map(async (url) => {
            const res = await fetch(url, { headers: accept });
            assertEquals(res.status, 200, url);
            const type = res.headers.get("content-type")!;
            return decodeMultipart(new Uint8Array(await res.arrayBuffer()), boundaryOf(type)!)
              .map((p) => p.body);
          }),
        );
        assertEquals(bridged.map((b) => b.length), [16 * 16 * 2]);
        assertEquals(bridged, forwarded);
      });
      await t.step(
        "single application/dicom STOW is wrapped for the dicomweb backend",
        async () => {
          const res = await fetch(`${g.url}/web/studies`, {
            method: "POST",
            headers: { "content-type": "application/dicom" },
            body: await Deno.readFile(viaScp.path),
          });
          assertEquals(res.status, 200, await res.clone().text());
          await res.body?.cancel();
        },
      );
      await t.step("dicom_scp -> dicomweb backend: findscu and getscu via QIDO/WADO", async () => {
        const s = seeded[1];
        const find = await runCommand("findscu", [
          "-v",
          "-S",
          "-aec",
          "GWWEB",
          "-k",
          "QueryRetrieveLevel=STUDY",
          "-k",
          `PatientID=${s.patientId}`,
          "-k",
          "StudyInstanceUID",
          "127.0.0.1",
          String(scpPort),
        ]);
        assertEquals(find.code, 0, find.stderr);
        assertMatch(find.stdout + find.stderr, new RegExp(s.studyUid.replaceAll(".", "\\.")));
        const into = await tempDir("getscu-web-");
        const get = await runCommand("getscu", [
          "-S",
          "-aec",
          "GWWEB",
          "-od",
          into,
          "-k",
          "QueryRetrieveLevel=SERIES",
          "-k",
          `StudyInstanceUID=${s.studyUid}`,
          "-k",
          `SeriesInstanceUID=${s.seriesUid}`,
          "127.0.0.1",
          String(scpPort),
        ]);
        assertEquals(get.code, 0, get.stderr);
        const got: string[] = [];
        for await (const e of Deno.readDir(into)) {
          got.push(parseP10(await Deno.readFile(`${into}/${e.name}`)).meta.sopInstanceUid);
        }
        assertEquals(
          got.sort(),
          seeded.filter((i) => i.seriesUid === s.seriesUid).map((i) => i.sopInstanceUid).sort(),
        );
        await removeDir(into);
      });
      await t.step("baseline: 501 without a DICOMweb-capable backend, 404, 405", async () => {
        const r501 = await fetch(`${g.url}/baseline/studies`);
        const body = await json(r501) as { error: { code: string } };
        assertEquals([r501.status, body.error.code], [501, "not_implemented"]);
        const r404 = await fetch(`${g.url}/baseline/nothing`);
        assertEquals(r404.status, 404);
        await r404.body?.cancel();
        const r405 = await fetch(`${g.url}/baseline/studies/1.2/series`, { method: "DELETE" });
        assertEquals(r405.status, 405);
        assertEquals(r405.headers.get("allow"), "GET, HEAD");
        await r405.body?.cancel();
      });
    } finally {
      await gw?.stop();
      await orthanc.stop();
      await removeDir(dir);
    }
  },
});
