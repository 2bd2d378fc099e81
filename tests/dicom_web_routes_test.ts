/**
 * The `dicomweb` endpoint's route table against docs/dicom.md ("Routes") and PS3.18's Studies
 * Service (Table 10.3-2): every documented route is one of the endpoint's and served, every route
 * of the endpoint is documented, every mandatory PS3.18 resource is routed and every optional one
 * is routed or listed as not routed. Then every documented route and every QIDO-RS level through
 * real archives: Orthanc's DICOMweb plugin (forwarded), Orthanc over DIMSE and DCMTK `dcmqrscp`
 * (the dicom_scu bridge), including searches with matching keys above their level, which a
 * hierarchical PACS (dcmqrscp) would ignore.
 *
 * Most requests are plain fetch (to check exact paths and answers); the npm `dicomweb-client`
 * (what OHIF uses; XMLHttpRequest from the `xhr2` polyfill) then searches every level and
 * retrieves through each backend as a viewer would.
 */
import { type GeneratedInstance, generateInstances } from "../fixtures/dicom/generate.ts";
import {
  type DicomPeer,
  type OrthancPeer,
  requireDicomwebPlugin,
  startDcmqrscp,
  startOrthanc,
} from "../fixtures/dicom/peers.ts";
import {
  encodeMultipart,
  newBoundary,
  parseBulkDataPath,
  relatedContentType,
} from "../gateway/dicom/mod.ts";
import { DICOMWEB_ROUTES } from "../gateway/endpoints/mod.ts";
import { findDicomwebRoute } from "../gateway/endpoints/dicomweb.ts";
import { dicomwebService } from "../gateway/middleware/request_kind.ts";
import { assert, assertEquals } from "./assert.ts";
import { startTestGateway, type TestGateway } from "./harness.ts";
import { freePort, removeDir, REPO_ROOT, requirePeer, tempDir } from "./support/mod.ts";
// Not through support/mod.ts: only this test loads the npm client and its polyfill.
import { dicomwebClient } from "./support/dicomweb_client.ts";

type Service = "qido" | "wado" | "stow";

/** One row of the docs' route table. */
interface DocRoute {
  service: Service;
  template: string;
  methods: string[];
}

/** The "Routes" table of docs/dicom.md and the paths its "Not routed" paragraph names. */
async function documentedRoutes(): Promise<{ routes: DocRoute[]; notRouted: string[] }> {
  const text = await Deno.readTextFile(`${REPO_ROOT}/docs/dicom.md`);
  const section = text.slice(text.indexOf("#### Routes"));
  const body = section.slice(0, section.indexOf("\n## "));
  const routes: DocRoute[] = [];
  for (const line of body.split("\n")) {
    const cells = line.split("|").slice(1, -1).map((c) => c.trim());
    const m = /^(QIDO|WADO|STOW)-RS$/.exec(cells[0] ?? "");
    if (!m) continue;
    routes.push({
      service: m[1].toLowerCase() as Service,
      template: cells[1].replaceAll("`", ""),
      methods: cells[2].split(",").map((s) => s.trim()),
    });
  }
  const para = body.slice(body.indexOf("Not routed"));
  const notRouted = [...para.slice(0, para.indexOf("\n\n")).matchAll(/`(\/[^`]+)`/g)]
    .map((m) => m[1]);
  return { routes, notRouted };
}

/**
 * PS3.18 Table 10.3-2, the Studies Service resources with URL templates (the Rendered MPR and 3D
 * Volume resources are left out: docs/dicom.md names them as not routed): template, transactions
 * (Search GET, Store POST, Retrieve GET), mandatory for an origin server.
 */
const PS3_18: [string, Service, string, boolean][] = [
  ["/studies", "qido", "GET", true],
  ["/studies", "stow", "POST", true],
  ["/studies/{study}", "wado", "GET", true],
  ["/studies/{study}", "stow", "POST", true],
  ["/studies/{study}/metadata", "wado", "GET", true],
  ["/studies/{study}/bulkdata", "wado", "GET", false],
  ["/studies/{study}/pixeldata", "wado", "GET", false],
  ["/studies/{study}/rendered", "wado", "GET", true],
  ["/studies/{study}/thumbnail", "wado", "GET", false],
  ["/studies/{study}/series", "qido", "GET", true],
  ["/studies/{study}/instances", "qido", "GET", true],
  ["/series", "qido", "GET", true],
  ["/studies/{study}/series/{series}", "wado", "GET", true],
  ["/studies/{study}/series/{series}/metadata", "wado", "GET", true],
  ["/studies/{study}/series/{series}/bulkdata", "wado", "GET", false],
  ["/studies/{study}/series/{series}/pixeldata", "wado", "GET", false],
  ["/studies/{study}/series/{series}/instances", "qido", "GET", true],
  ["/studies/{study}/series/{series}/rendered", "wado", "GET", true],
  ["/studies/{study}/series/{series}/thumbnail", "wado", "GET", false],
  ["/instances", "qido", "GET", true],
  ["/studies/{study}/series/{series}/instances/{instance}", "wado", "GET", true],
  ["/studies/{study}/series/{series}/instances/{instance}/metadata", "wado", "GET", true],
  ["/studies/{study}/series/{series}/instances/{instance}/bulkdata", "wado", "GET", false],
  ["/studies/{study}/series/{series}/instances/{instance}/pixeldata", "wado", "GET", false],
  ["/studies/{study}/series/{series}/instances/{instance}/rendered", "wado", "GET", true],
  ["/studies/{study}/series/{series}/instances/{instance}/thumbnail", "wado", "GET", false],
  ["/studies/{study}/series/{series}/instances/{instance}/frames/{frames}", "wado", "GET", true],
  [
    "/studies/{study}/series/{series}/instances/{instance}/frames/{frames}/rendered",
    "wado",
    "GET",
    true,
  ],
  [
    "/studies/{study}/series/{series}/instances/{instance}/frames/{frames}/thumbnail",
    "wado",
    "GET",
    false,
  ],
  // The BulkDataURIs a server hands out in metadata (the gateway's are under /bulkdata/).
  ["/bulkdata/{path}", "wado", "GET", true],
];

/** UIDs and lists that fill a template. */
interface Fill {
  study: string;
  series: string;
  instance: string;
  frames?: string;
  path?: string;
}

function fill(template: string, f: Fill): string {
  const path = f.path ?? `${f.study}/${f.series}/${f.instance}/7FE00010`;
  return template.replaceAll("{study}", f.study).replaceAll("{series}", f.series)
    .replaceAll("{instance}", f.instance).replaceAll("{frames}", f.frames ?? "1")
    .replaceAll("{path}", path);
}

const SAMPLE: Fill = { study: "1.2.3", series: "1.2.3.4", instance: "1.2.3.4.5" };

Deno.test("DICOMweb routes: docs/dicom.md, the endpoint, request_filter and PS3.18 agree", async () => {
  const { routes, notRouted } = await documentedRoutes();
  assert(routes.length >= 20, `only ${routes.length} rows read from docs/dicom.md`);
  // Every documented row is a route of the endpoint, of the same service, for each method.
  for (const doc of routes) {
    const path = fill(doc.template, SAMPLE);
    for (const method of doc.methods) {
      const { route } = findDicomwebRoute(method, path);
      assert(route, `docs list ${method} ${doc.template}, the endpoint has no such route`);
      assertEquals(route.service, doc.service, `${method} ${doc.template}`);
      assertEquals(dicomwebService(method, path), doc.service, `request_filter: ${method} ${path}`);
    }
    const { allowed } = findDicomwebRoute("DELETE", path);
    assertEquals(
      allowed.sort(),
      routes.filter((r) => fill(r.template, SAMPLE) === path).flatMap((r) => r.methods).sort(),
      `the methods of ${doc.template}`,
    );
  }
  // Every route of the endpoint is documented.
  for (const route of DICOMWEB_ROUTES) {
    const documented = routes.filter((d) => route.pattern.test(fill(d.template, SAMPLE)));
    assert(documented.length > 0, `route "${route.name}" (${route.pattern}) is not in docs`);
    for (const method of route.methods) {
      assert(
        documented.some((d) => d.methods.includes(method) && d.service === route.service),
        `route "${route.name}": ${method} is not in docs`,
      );
    }
  }
  // PS3.18: mandatory resources are routed; optional ones routed or listed as not routed.
  for (const [template, service, method, mandatory] of PS3_18) {
    const doc = routes.find((d) => d.template === template && d.service === service);
    if (doc) {
      assert(doc.methods.includes(method), `${template}: ${method}`);
      continue;
    }
    assert(!mandatory, `PS3.18 requires ${method} ${template} (${service}); docs do not list it`);
    assert(notRouted.includes(template), `${template} is neither routed nor listed as not routed`);
  }
  for (const template of notRouted) {
    if (template.startsWith("/workitems")) continue;
    assertEquals(findDicomwebRoute("GET", fill(template, SAMPLE)).allowed, [], template);
  }
});

/** Whether the gateway's router refused the request (not a backend's answer). */
async function routed(res: Response): Promise<{ routed: boolean; text: string }> {
  const text = await res.text();
  const refused = (res.status === 404 && text.includes("no DICOMweb route")) || res.status === 405;
  return { routed: !refused, text };
}

Deno.test("DICOMweb routes: each documented route is served, each not routed one is 404", async () => {
  const { routes, notRouted } = await documentedRoutes();
  // An echo backend cannot serve DICOMweb: a route answers 501, a missing one 404.
  const gw = await startTestGateway(`
[endpoints.web]
service = "dicomweb"
[backends.echo]
service = "echo"
[pipelines.web]
endpoints = ["web"]
backends = ["echo"]
`);
  try {
    for (const doc of routes) {
      for (const method of doc.methods) {
        const url = `${gw.url}/dicomweb${fill(doc.template, SAMPLE)}`;
        const res = await fetch(url, { method });
        await res.body?.cancel();
        assertEquals(res.status, 501, `${method} ${doc.template}`);
      }
    }
    for (const template of notRouted) {
      const res = await fetch(`${gw.url}/dicomweb${fill(template, SAMPLE)}`);
      const body = await res.json() as { error: { code: string } };
      assertEquals([res.status, body.error.code], [404, "not_found"], template);
    }
  } finally {
    await gw.stop();
  }
});

const HAS_PEERS = requirePeer("dcmqrscp", "dcmqrscp", "dcmtk") &&
  requirePeer("Orthanc", "Orthanc", "orthanc") && requireDicomwebPlugin();

function gatewayToml(orthanc: OrthancPeer, qr: DicomPeer): string {
  return `
[endpoints.web]
service = "dicomweb"
[endpoints.web.options]
path_prefix = "/web"
[endpoints.odimse]
service = "dicomweb"
[endpoints.odimse.options]
path_prefix = "/odimse"
[endpoints.qr]
service = "dicomweb"
[endpoints.qr.options]
path_prefix = "/qr"

[backends.orthanc_web]
service = "dicomweb"
[backends.orthanc_web.options]
base_url = "${orthanc.dicomweb}"
[backends.orthanc_dimse]
service = "dicom_scu"
timeout_secs = 20
[backends.orthanc_dimse.options]
aet = "${orthanc.aet}"
host = "127.0.0.1"
port = ${orthanc.port}
[backends.qr]
service = "dicom_scu"
timeout_secs = 20
[backends.qr.options]
aet = "${qr.aet}"
host = "127.0.0.1"
port = ${qr.port}

[pipelines.web]
endpoints = ["web"]
backends = ["orthanc_web"]
[pipelines.odimse]
endpoints = ["odimse"]
backends = ["orthanc_dimse"]
[pipelines.qr]
endpoints = ["qr"]
backends = ["qr"]
`;
}

type Json = Record<string, { vr: string; Value?: unknown[] }>;

async function search(url: string): Promise<Json[]> {
  const res = await fetch(url, { headers: { accept: "application/dicom+json" } });
  const text = await res.text();
  assertEquals(res.status, 200, `${url}: ${text}`);
  return JSON.parse(text) as Json[];
}

function uids(list: Json[], tag: string): string[] {
  return list.map((m) => String(m[tag]?.Value?.[0])).sort();
}

function expect(seeded: GeneratedInstance[], pick: (i: GeneratedInstance) => boolean) {
  const chosen = seeded.filter(pick);
  return {
    studies: [...new Set(chosen.map((i) => i.studyUid))].sort(),
    series: [...new Set(chosen.map((i) => i.seriesUid))].sort(),
    instances: chosen.map((i) => i.sopInstanceUid).sort(),
  };
}

/** The QIDO-RS searches at every level, and with matching keys above the level searched. */
async function searchEveryLevel(
  t: Deno.TestContext,
  base: string,
  seeded: GeneratedInstance[],
  bridged: boolean,
): Promise<void> {
  const s = seeded[0];
  const all = expect(seeded, () => true);
  const ofStudy = expect(seeded, (i) => i.studyUid === s.studyUid);
  const ofSeries = expect(seeded, (i) => i.seriesUid === s.seriesUid);
  const second = seeded.find((i) => i.studyUid !== s.studyUid)!;
  const ofPatient = expect(seeded, (i) => i.patientId === second.patientId);
  const seriesNumber = (i: GeneratedInstance) => Number(i.seriesUid.split(".").pop());

  await t.step(
    "every level: /studies, /series, /instances and below a study or series",
    async () => {
      assertEquals(uids(await search(`${base}/studies`), "0020000D"), all.studies);
      const series = await search(`${base}/series`);
      assertEquals(uids(series, "0020000E"), all.series);
      // A search of all series also answers the study attributes (PS3.18 10.6.3.3).
      for (const m of series) assert(m["00100020"]?.Value?.length, JSON.stringify(m));
      const instances = await search(`${base}/instances`);
      assertEquals(uids(instances, "00080018"), all.instances);
      for (const m of instances) {
        assert(m["0020000D"]?.Value?.length && m["0020000E"]?.Value?.length, JSON.stringify(m));
      }
      assertEquals(
        uids(await search(`${base}/studies/${s.studyUid}/series`), "0020000E"),
        ofStudy.series,
      );
      const inStudy = await search(`${base}/studies/${s.studyUid}/instances`);
      assertEquals(uids(inStudy, "00080018"), ofStudy.instances);
      assertEquals(uids(inStudy, "0020000D"), ofStudy.instances.map(() => s.studyUid));
      assertEquals(
        uids(
          await search(`${base}/studies/${s.studyUid}/series/${s.seriesUid}/instances`),
          "00080018",
        ),
        ofSeries.instances,
      );
      if (bridged) {
        // (Orthanc's DICOMweb plugin answers HEAD with 404; forwarded, that is its answer.)
        const head = await fetch(`${base}/studies/${s.studyUid}/instances`, { method: "HEAD" });
        assertEquals(head.status, 200);
        await head.body?.cancel();
      }
    },
  );

  await t.step("keys constrain: path UIDs, query UIDs, keys of levels above", async () => {
    assertEquals(
      uids(
        await search(`${base}/studies/${s.studyUid}/instances?SeriesInstanceUID=${s.seriesUid}`),
        "00080018",
      ),
      ofSeries.instances,
    );
    assertEquals(
      uids(await search(`${base}/instances?StudyInstanceUID=${s.studyUid}`), "00080018"),
      ofStudy.instances,
    );
    const byPatient = await search(`${base}/instances?PatientID=${second.patientId}`);
    assertEquals(uids(byPatient, "00080018"), ofPatient.instances);
    assertEquals(uids(byPatient, "00100020"), ofPatient.instances.map(() => second.patientId));
    assertEquals(
      uids(await search(`${base}/series?PatientID=${second.patientId}`), "0020000E"),
      ofPatient.series,
    );
    assertEquals(
      uids(await search(`${base}/studies/${s.studyUid}/instances?SeriesNumber=2`), "00080018"),
      expect(seeded, (i) => i.studyUid === s.studyUid && seriesNumber(i) === 2).instances,
    );
    assertEquals(
      uids(
        await search(`${base}/instances?PatientID=${second.patientId}&SeriesNumber=1`),
        "00080018",
      ),
      expect(seeded, (i) => i.patientId === second.patientId && seriesNumber(i) === 1).instances,
    );
    assertEquals(await search(`${base}/instances?PatientID=NOBODY`), []);
  });

  await t.step("limit and offset page through a search split by level", async () => {
    const pages: string[] = [];
    for (let offset = 0; offset < ofPatient.instances.length; offset += 3) {
      const page = await search(
        `${base}/instances?PatientID=${second.patientId}&limit=3&offset=${offset}`,
      );
      assert(page.length <= 3, String(page.length));
      pages.push(...page.map((m) => String(m["00080018"].Value?.[0])));
    }
    assertEquals(pages.sort(), ofPatient.instances);
  });
}

/** The npm dicomweb-client's searches and retrievals through `base`, as a viewer calls them. */
async function viewerCalls(base: string, seeded: GeneratedInstance[]): Promise<void> {
  const client = dicomwebClient(base);
  if (!client) return;
  const s = seeded[0];
  const all = expect(seeded, () => true);
  const ofStudy = expect(seeded, (i) => i.studyUid === s.studyUid);
  const ofSeries = expect(seeded, (i) => i.seriesUid === s.seriesUid);
  const study = { studyInstanceUID: s.studyUid };
  const series = { ...study, seriesInstanceUID: s.seriesUid };
  assertEquals(uids(await client.searchForStudies() as Json[], "0020000D"), all.studies);
  assertEquals(uids(await client.searchForSeries() as Json[], "0020000E"), all.series);
  assertEquals(uids(await client.searchForSeries(study) as Json[], "0020000E"), ofStudy.series);
  assertEquals(uids(await client.searchForInstances() as Json[], "00080018"), all.instances);
  assertEquals(
    uids(await client.searchForInstances(study) as Json[], "00080018"),
    ofStudy.instances,
  );
  assertEquals(
    uids(await client.searchForInstances(series) as Json[], "00080018"),
    ofSeries.instances,
  );
  assertEquals(
    uids(
      await client.searchForInstances({ queryParams: { PatientID: s.patientId } }) as Json[],
      "00100020",
    ),
    expect(seeded, (i) => i.patientId === s.patientId).instances.map(() => s.patientId),
  );
  const instance = { ...series, sopInstanceUID: s.sopInstanceUid };
  const meta = await client.retrieveInstanceMetadata(instance) as Json[];
  assertEquals(uids(meta, "00080018"), [s.sopInstanceUid]);
  const file = new Uint8Array(await client.retrieveInstance(instance));
  assertEquals(new TextDecoder().decode(file.subarray(128, 132)), "DICM");
}

/** Every documented route with the UIDs of `s`: served (through `base`) and how. */
async function serveEveryRoute(
  base: string,
  s: GeneratedInstance,
  stow: GeneratedInstance[],
  bridged: boolean,
): Promise<void> {
  const { routes } = await documentedRoutes();
  // A BulkDataURI the bridge hands out (a dicomweb origin hands out its own, elsewhere).
  let bulk = `${s.studyUid}/${s.seriesUid}/${s.sopInstanceUid}/7FE00010`;
  if (bridged) {
    const meta = await search(
      `${base}/studies/${s.studyUid}/series/${s.seriesUid}/instances/${s.sopInstanceUid}/metadata`,
    );
    const uri = String((meta[0]["7FE00010"] as { BulkDataURI?: string }).BulkDataURI);
    assert(uri.includes("/bulkdata/"), JSON.stringify(meta[0]["7FE00010"]));
    bulk = uri.slice(uri.indexOf("/bulkdata/") + "/bulkdata/".length);
    assert(parseBulkDataPath(`/bulkdata/${bulk}`), uri);
  }
  const values = { study: s.studyUid, series: s.seriesUid, instance: s.sopInstanceUid, path: bulk };
  let stored = 0;
  for (const doc of routes) {
    for (const method of doc.methods) {
      let path = fill(doc.template, values);
      let init: RequestInit = { method };
      if (method === "POST") {
        // STOW-RS: a new instance each time, into its own study.
        const file = stow[stored++];
        path = fill(doc.template, { ...values, study: file.studyUid });
        const boundary = newBoundary();
        init = {
          method,
          headers: {
            "content-type": relatedContentType(boundary),
            accept: "application/dicom+json",
          },
          body: encodeMultipart(
            [{ contentType: "application/dicom", body: await Deno.readFile(file.path) }],
            boundary,
          ) as BodyInit,
        };
      }
      const res = await fetch(`${base}${path}`, init);
      const { routed: ok, text } = await routed(res);
      assert(ok, `${method} ${doc.template}: ${res.status} ${text.slice(0, 200)}`);
      if (!bridged) continue;
      // The bridge: whole-study and whole-series renderings are 501, everything else succeeds.
      const whole = /^\/studies\/\{study\}(\/series\/\{series\})?\/(rendered|thumbnail)$/
        .test(doc.template);
      assertEquals(
        res.status,
        whole ? 501 : 200,
        `${method} ${doc.template}: ${text.slice(0, 200)}`,
      );
    }
  }
}

Deno.test({
  name: "DICOMweb routes through Orthanc (DICOMweb and DIMSE) and dcmqrscp: every QIDO-RS level",
  ignore: !HAS_PEERS,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async (t) => {
    const dir = await tempDir("dicomweb-routes-");
    const seeded = await generateInstances(`${dir}/seed`, {
      studies: 2,
      seriesPerStudy: 2,
      instancesPerSeries: 3,
      patientPrefix: "ROUTE",
      size: 32, // pixel data over 1 KiB: the bridge's metadata names it by a BulkDataURI
    });
    const orthanc = await startOrthanc({
      dicomweb: true,
      known: [{ aet: "GATEWAY_SCU", port: freePort() }],
    });
    let qr: DicomPeer | undefined;
    let gw: TestGateway | undefined;
    try {
      for (const i of seeded) await orthanc.upload(await Deno.readFile(i.path));
      qr = await startDcmqrscp(seeded.map((i) => i.path));
      gw = await startTestGateway(gatewayToml(orthanc, qr));
      const g = gw;
      const backends: [string, string, boolean][] = [
        ["Orthanc's DICOMweb plugin (forwarded)", "/web", false],
        ["Orthanc over DIMSE (dicom_scu bridge)", "/odimse", true],
        ["DCMTK dcmqrscp (dicom_scu bridge)", "/qr", true],
      ];
      // All searches first: the STOW-RS requests below add studies to the archives.
      for (const [name, prefix, bridged] of backends) {
        await t.step(`every QIDO-RS level: ${name}`, async (t) => {
          await searchEveryLevel(t, `${g.url}${prefix}`, seeded, bridged);
        });
        await t.step(`dicomweb-client searches and retrieves: ${name}`, async () => {
          await viewerCalls(`${g.url}${prefix}`, seeded);
        });
      }
      for (const [name, prefix, bridged] of backends) {
        await t.step(`every documented route is served: ${name}`, async () => {
          // Two instances of a new study for the two STOW-RS routes.
          const stow = await generateInstances(`${dir}/stow${prefix}`, {
            instancesPerSeries: 2,
            patientPrefix: `STOW${prefix.slice(1).toUpperCase()}`,
          });
          await serveEveryRoute(`${g.url}${prefix}`, seeded[0], stow, bridged);
        });
      }
    } finally {
      await gw?.stop();
      await qr?.stop();
      await orthanc.stop();
      await removeDir(dir);
    }
  },
});
