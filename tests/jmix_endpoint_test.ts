/**
 * The `jmix` endpoint end to end: create (POST), manifest, retrieve, query by study through the
 * index kept in a local storage backend; invalid and hostile uploads refused with nothing stored.
 */
import { dicomPayload } from "../gateway/endpoints/jmix/mod.ts";
import { buildPackage, readZip, writeZip } from "../shared/jmix/mod.ts";
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { startTestGateway, type TestGateway } from "./harness.ts";
import { jmixConfig, lieAboutSizes, rawZip, studyFiles } from "./jmix_support.ts";
import { removeDir, tempDir } from "./support/mod.ts";

const LIMITS = { maxEntries: 100, maxUncompressedBytes: 64 * 1024 * 1024 };

async function studyPackage() {
  const dir = await tempDir("jmix-ep-");
  try {
    const { made, files } = await studyFiles(dir);
    const { metadata, dicom } = dicomPayload(files);
    return { made, pkg: await buildPackage({ metadata, dicom, sender: { name: "modality" } }) };
  } finally {
    await removeDir(dir);
  }
}

function post(gw: TestGateway, body: Uint8Array, type = "application/zip") {
  return fetch(`${gw.url}/jmix/api/jmix`, {
    method: "POST",
    headers: { "content-type": type },
    body: body as BodyInit,
  });
}

async function errorOf(res: Response): Promise<{ status: number; code: string; message: string }> {
  const body = await res.json();
  return { status: res.status, code: body.error.code, message: body.error.message };
}

Deno.test("jmix endpoint: create, manifest, retrieve, query by study, duplicate id", async () => {
  const gw = await startTestGateway(jmixConfig());
  try {
    const { made, pkg } = await studyPackage();
    const res = await post(gw, pkg.zip);
    const created = await res.json();
    assertEquals(res.status, 201, JSON.stringify(created));
    assertEquals(created, {
      id: pkg.id,
      status: "stored",
      studies: [made[0].studyUid],
      location: `/jmix/api/jmix/${pkg.id}`,
    });
    assertEquals(res.headers.get("location"), `/jmix/api/jmix/${pkg.id}`);
    // Stored through the storage backend, indexed by study.
    const stored = await Deno.readFile(`${gw.dir}/store/jmix/packages/${pkg.id}.zip`);
    assertEquals(stored, pkg.zip);
    assertEquals(
      await Deno.readFile(`${gw.dir}/store/jmix/manifests/${pkg.id}.json`),
      pkg.manifestBytes,
    );
    const index = JSON.parse(
      await Deno.readTextFile(`${gw.dir}/store/jmix/index/${made[0].studyUid}.json`),
    );
    assertEquals(index.study_instance_uid, made[0].studyUid);
    assertEquals(index.packages.map((p: { id: string }) => p.id), [pkg.id]);

    const manifest = await fetch(`${gw.url}/jmix/api/jmix/${pkg.id}/manifest`);
    assertEquals(manifest.status, 200);
    assertEquals(manifest.headers.get("content-type"), "application/json");
    assertEquals(await manifest.json(), pkg.manifest);
    // Without its copy, the manifest is read from the zip.
    await Deno.remove(`${gw.dir}/store/jmix/manifests/${pkg.id}.json`);
    const fromZip = await fetch(`${gw.url}/jmix/api/jmix/${pkg.id}/manifest`);
    assertEquals(new Uint8Array(await fromZip.arrayBuffer()), pkg.manifestBytes);

    const zip = await fetch(`${gw.url}/jmix/api/jmix/${pkg.id}`);
    assertEquals(zip.status, 200);
    assertEquals(zip.headers.get("content-type"), "application/zip");
    assertEquals(zip.headers.get("x-jmix-id"), pkg.id);
    assertEquals(new Uint8Array(await zip.arrayBuffer()), pkg.zip);

    const q = await fetch(`${gw.url}/jmix/api/jmix?studyInstanceUid=${made[0].studyUid}`);
    assertEquals(q.status, 200);
    assertEquals(q.headers.get("x-jmix-id"), pkg.id);
    assertEquals(q.headers.get("content-location"), `/jmix/api/jmix/${pkg.id}`);
    const entries = readZip(new Uint8Array(await q.arrayBuffer()), LIMITS);
    assert(entries.has(`payload/dicom/${made[0].sopInstanceUid}.dcm`));

    const dup = await post(gw, pkg.zip);
    assertEquals((await errorOf(dup)).status, 409);
    const missing = await fetch(`${gw.url}/jmix/api/jmix/${crypto.randomUUID()}`);
    assertEquals((await errorOf(missing)).code, "package_not_found");
    const unknown = await fetch(`${gw.url}/jmix/api/jmix?studyInstanceUid=1.2.3.4`);
    assertEquals(await errorOf(unknown), {
      status: 404,
      code: "package_not_found",
      message: "no package for study 1.2.3.4",
    });
    const badUid = await fetch(`${gw.url}/jmix/api/jmix?studyInstanceUid=../etc`);
    assertEquals((await errorOf(badUid)).code, "invalid_study_instance_uid");
    const noUid = await fetch(`${gw.url}/jmix/api/jmix`);
    assertEquals((await errorOf(noUid)).code, "missing_study_instance_uid");
    const put = await fetch(`${gw.url}/jmix/api/jmix/${pkg.id}`, { method: "PUT", body: "x" });
    assertEquals([put.status, put.headers.get("allow")], [405, "GET, HEAD"]);
    await put.body?.cancel();
  } finally {
    await gw.stop();
  }
});

Deno.test("jmix endpoint: invalid and hostile uploads are refused, nothing stored", async () => {
  const gw = await startTestGateway(jmixConfig());
  try {
    const { pkg } = await studyPackage();
    const x = new TextEncoder().encode("x");
    const cases: [string, Uint8Array, string, number, string][] = [
      ["not a zip", new TextEncoder().encode("hello"), "application/zip", 415, "not_a_zip"],
      ["json body", x, "application/json", 415, "unsupported_media_type"],
      ["traversal", rawZip({ "../../evil": x }), "application/zip", 400, "invalid_package"],
      ["absolute", rawZip({ "/tmp/evil": x }), "application/zip", 400, "invalid_package"],
      ["backslash", rawZip({ "payload\\x": x }), "application/zip", 400, "invalid_package"],
      [
        "bomb",
        rawZip({ "payload/files/zeros": new Uint8Array(8 * 1024 * 1024) }),
        "application/zip",
        413,
        "package_too_large",
      ],
      [
        "lying bomb",
        lieAboutSizes(rawZip({ "payload/files/zeros": new Uint8Array(8 * 1024 * 1024) }), 10),
        "application/zip",
        400,
        "invalid_package",
      ],
      [
        "too many entries",
        rawZip(Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`payload/files/${i}`, x]))),
        "application/zip",
        400,
        "invalid_package",
      ],
      ["no manifest", rawZip({ "audit.json": x }), "application/zip", 400, "invalid_package"],
      [
        "over max_package_bytes",
        new Uint8Array(1048577),
        "application/zip",
        413,
        "payload_too_large",
      ],
    ];
    for (const [name, body, type, status, code] of cases) {
      const err = await errorOf(await post(gw, body, type));
      assertEquals([name, err.status, err.code], [name, status, code], err.message);
    }
    const traversal = await errorOf(await post(gw, rawZip({ "../../evil": x })));
    assertMatch(traversal.message, /`\.` or `\.\.` segment/);
    const noManifest = await post(gw, rawZip({ "audit.json": x }));
    const body = await noManifest.json();
    assertEquals(body.error.details.problems, [
      "manifest.json is missing",
      "audit.json is not UTF-8 JSON",
    ]);
    // A tampered package: schema-valid but its payload does not match.
    const entries = readZip(pkg.zip, LIMITS);
    const name = [...entries.keys()].find((k) => k.startsWith("payload/dicom/"))!;
    const bytes = entries.get(name)!.slice();
    bytes[bytes.length - 1] ^= 1;
    entries.set(name, bytes);
    const tampered = await post(gw, writeZip(entries));
    const t = await tampered.json();
    assertEquals(tampered.status, 400);
    assertEquals(t.error.details.problems[0], `${name} does not match its sha256`);
    let stored: string[] = [];
    try {
      stored = [...Deno.readDirSync(`${gw.dir}/store/jmix/packages`)].map((e) => e.name);
    } catch { /* never created */ }
    assertEquals(stored, []);
  } finally {
    await gw.stop();
  }
});

Deno.test("jmix endpoint: a pipeline without storage answers 500 jmix_misconfigured", async () => {
  const gw = await startTestGateway(
    jmixConfig("", `["echo"]`, `[backends.echo]\nservice = "echo"\n`),
  );
  try {
    const err = await errorOf(await fetch(`${gw.url}/jmix/api/jmix?studyInstanceUid=1.2`));
    assertEquals(err.status, 500);
    assertEquals(err.code, "jmix_misconfigured");
    assertMatch(err.message, /has no storage backend/);
  } finally {
    await gw.stop();
  }
});

Deno.test("jmix endpoint: pipeline middleware act on JMIX requests and responses; zips pass untouched", async () => {
  const spec = JSON.stringify([{
    operation: "shift",
    spec: { id: "package.id", status: "package.status" },
  }]);
  const config = `transforms_path = "{DIR}/transforms"\n` +
    jmixConfig("", `["store"]\nmiddleware = ["t"]`, "") +
    `[middleware.t]\ntype = "transform"\n[middleware.t.options]\nspec_path = "s.json"\n` +
    `apply = "both"\n`;
  const gw = await startTestGateway(config, { files: { "transforms/s.json": spec } });
  try {
    const { pkg } = await studyPackage();
    const res = await post(gw, pkg.zip);
    assertEquals(res.status, 201);
    assertEquals(await res.json(), { package: { id: pkg.id, status: "stored" } });
    const zip = await fetch(`${gw.url}/jmix/api/jmix/${pkg.id}`);
    assertEquals(zip.status, 200);
    assertEquals(new Uint8Array(await zip.arrayBuffer()), pkg.zip);
  } finally {
    await gw.stop();
  }
});
