/**
 * The `jmix` endpoint's C-GET path against DCMTK `dcmqrscp`: a query for a study with no package
 * retrieves it, builds, signs and encrypts the package, stores and indexes it; the next query is
 * answered from the index without a retrieval. Signed uploads are checked against `verify_keys`.
 */
import { type DicomPeer, startDcmqrscp } from "../fixtures/dicom/peers.ts";
import { dicomPayload } from "../gateway/endpoints/jmix/mod.ts";
import {
  buildPackage,
  importDecryptionKey,
  importSigningKey,
  importVerifyKey,
  readZip,
  validatePackage,
} from "../shared/jmix/mod.ts";
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { startTestGateway } from "./harness.ts";
import { jmixConfig, pemPair, studyFiles } from "./jmix_support.ts";
import { removeDir, requirePeer, tempDir } from "./support/mod.ts";

const LIMITS = { maxEntries: 100, maxUncompressedBytes: 64 * 1024 * 1024 };

function toml(text: string): string {
  return JSON.stringify(text);
}

function scuBackend(peer: DicomPeer): string {
  return `
[backends.pacs]
service = "dicom_scu"
timeout_secs = 10
[backends.pacs.options]
aet = "${peer.aet}"
host = "127.0.0.1"
port = ${peer.port}
local_aet = "GATEWAY_SCU"
`;
}

Deno.test({
  name: "jmix endpoint: query by study C-GETs from dcmqrscp, builds a signed encrypted package",
  ignore: !requirePeer("dcmqrscp", "dcmqrscp", "dcmtk"),
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const dir = await tempDir("jmix-cget-");
    const { made } = await studyFiles(`${dir}/seed`);
    const qr = await startDcmqrscp(made.map((m) => m.path));
    const sig = await pemPair("Ed25519");
    const enc = await pemPair("X25519");
    const options = `sender_name = "gw-test"\nsigning_key = ${toml(sig.privatePem)}\n` +
      `signing_key_id = "gw-1"\nencryption_public_key = ${toml(enc.publicPem)}\n`;
    const gw = await startTestGateway(jmixConfig(options, `["store", "pacs"]`, scuBackend(qr)));
    try {
      const study = made[0].studyUid;
      const res = await fetch(`${gw.url}/jmix/api/jmix?studyInstanceUid=${study}`);
      assertEquals(res.status, 200, res.status === 200 ? "" : await res.clone().text());
      assertEquals(res.headers.get("content-type"), "application/zip");
      assertEquals(res.headers.get("x-jmix-created"), "true");
      const id = res.headers.get("x-jmix-id")!;
      const zip = new Uint8Array(await res.arrayBuffer());
      const valid = await validatePackage(zip, {
        limits: LIMITS,
        verifyKeys: [await importVerifyKey(sig.publicPem)],
        requireSignature: true,
        decryptionKey: await importDecryptionKey(enc.privatePem),
      });
      assertEquals(valid.manifest.id, id);
      assertEquals(valid.manifest.sender, { name: "gw-test" });
      assertEquals(valid.manifest.security.signature, {
        alg: "EdDSA",
        file: "manifest.jws",
        key_id: "gw-1",
      });
      assertEquals(valid.manifest.security.encryption?.file, "payload.enc");
      assertEquals(valid.metadata!.patient.id, "JMIX1");
      assertEquals(
        valid.metadata!.studies[0].series.map((s) => [s.series_instance_uid, s.instance_count]),
        [[`${study}.1`, 2], [`${study}.2`, 2]],
      );
      const entries = readZip(zip, LIMITS);
      assertEquals([...entries.keys()].sort(), [
        "audit.json",
        "manifest.json",
        "manifest.jws",
        "payload.enc",
      ]);
      const audit = JSON.parse(new TextDecoder().decode(entries.get("audit.json")));
      assertEquals(audit.audit.map((e: { event: string }) => e.event), ["created", "retrieved"]);
      assertEquals(audit.audit[1].details.instances, 4);

      // Stored and indexed: the manifest route and a second query answer from storage.
      const index = JSON.parse(await Deno.readTextFile(`${gw.dir}/store/jmix/index/${study}.json`));
      assertEquals(index.packages.map((p: { id: string }) => p.id), [id]);
      const manifest = await fetch(`${gw.url}/jmix/api/jmix/${id}/manifest`);
      assertEquals((await manifest.json()).id, id);
      await qr.stop();
      const again = await fetch(`${gw.url}/jmix/api/jmix?studyInstanceUid=${study}`);
      assertEquals(again.status, 200);
      assertEquals(again.headers.get("x-jmix-id"), id);
      assertEquals(again.headers.get("x-jmix-created"), null);
      assertEquals(new Uint8Array(await again.arrayBuffer()), zip);
      // The PACS is gone: an unknown study now fails on the association, as a 502.
      const gone = await fetch(`${gw.url}/jmix/api/jmix?studyInstanceUid=1.2.3`);
      assertEquals(gone.status, 502);
      await gone.body?.cancel();
    } finally {
      await gw.stop();
      await qr.stop();
      await removeDir(dir);
    }
  },
});

Deno.test({
  name: "jmix endpoint: a study the PACS does not hold is 404 study_not_found",
  ignore: !requirePeer("dcmqrscp", "dcmqrscp", "dcmtk"),
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const qr = await startDcmqrscp([]);
    const gw = await startTestGateway(jmixConfig("", `["store", "pacs"]`, scuBackend(qr)));
    try {
      const res = await fetch(`${gw.url}/jmix/api/jmix?studyInstanceUid=1.2.3.4.5`);
      const body = await res.json();
      assertEquals([res.status, body.error.code], [404, "study_not_found"]);
    } finally {
      await gw.stop();
      await qr.stop();
    }
  },
});

Deno.test("jmix endpoint: uploads must verify with verify_keys when require_signature", async () => {
  const sig = await pemPair("Ed25519");
  const other = await pemPair("Ed25519");
  const options = `verify_keys = [${toml(sig.publicPem)}]\nrequire_signature = true\n`;
  const gw = await startTestGateway(jmixConfig(options));
  const dir = await tempDir("jmix-sig-");
  try {
    const { files } = await studyFiles(dir);
    const { metadata, dicom } = dicomPayload(files);
    const post = (zip: Uint8Array) =>
      fetch(`${gw.url}/jmix/api/jmix`, { method: "POST", body: zip as BodyInit });
    const unsigned = await buildPackage({ metadata, dicom, sender: { name: "a" } });
    const r1 = await (await post(unsigned.zip)).json();
    assertEquals(r1.error.details.problems, ["a signed package (manifest.jws) is required"]);
    const wrong = await buildPackage({
      metadata,
      dicom,
      sender: { name: "a" },
      signing: { key: await importSigningKey(other.privatePem) },
    });
    const r2 = await (await post(wrong.zip)).json();
    assertMatch(r2.error.message, /does not verify with any configured key/);
    const signed = await buildPackage({
      metadata,
      dicom,
      sender: { name: "a" },
      signing: { key: await importSigningKey(sig.privatePem) },
    });
    const r3 = await post(signed.zip);
    const body = await r3.json();
    assertEquals([r3.status, body.id, body.status], [201, signed.id, "stored"]);
    assert(body.studies.length === 1);
  } finally {
    await gw.stop();
    await removeDir(dir);
  }
});
