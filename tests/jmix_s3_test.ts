/**
 * The `jmix` endpoint over an `s3://` storage root (s3rver on loopback): packages, manifest
 * copies and the study index are S3 objects under the root's prefix.
 */
import { dicomPayload } from "../gateway/endpoints/jmix/mod.ts";
import { buildPackage } from "../shared/jmix/mod.ts";
import { assertEquals } from "./assert.ts";
import { startTestGateway } from "./harness.ts";
import { jmixConfig, studyFiles } from "./jmix_support.ts";
import { requireS3rver, startS3rver } from "./storage_support.ts";
import { removeDir, tempDir } from "./support/mod.ts";

Deno.test({
  name: "jmix endpoint on S3: create, manifest, retrieve and query by study",
  ignore: !requireS3rver(),
  fn: async () => {
    const s3 = await startS3rver("jmix-bucket", ["JMIXKEY:jmix-secret"]);
    const store = `root = "s3://jmix-bucket/site-a"\nregion = "us-east-1"\n` +
      `endpoint = "${s3.endpoint}"\naccess_key_id = "JMIXKEY"\n` +
      `secret_access_key = "jmix-secret"\nread_pattern = "{path}"\nwrite_pattern = "{path}"`;
    const gw = await startTestGateway(jmixConfig("", `["store"]`, "", store));
    const dir = await tempDir("jmix-s3-");
    try {
      const { made, files } = await studyFiles(dir);
      const { metadata, dicom } = dicomPayload(files);
      const pkg = await buildPackage({ metadata, dicom, sender: { name: "s3-test" } });
      const res = await fetch(`${gw.url}/jmix/api/jmix`, {
        method: "POST",
        headers: { "content-type": "application/zip" },
        body: pkg.zip as BodyInit,
      });
      const body = await res.json();
      assertEquals([res.status, body.id], [201, pkg.id], JSON.stringify(body));
      const study = made[0].studyUid;
      assertEquals(
        await Deno.readFile(s3.objectFile(`site-a/jmix/packages/${pkg.id}.zip`)),
        pkg.zip,
      );
      const index = JSON.parse(
        await Deno.readTextFile(s3.objectFile(`site-a/jmix/index/${study}.json`)),
      );
      assertEquals(index.packages.map((p: { id: string }) => p.id), [pkg.id]);
      const manifest = await fetch(`${gw.url}/jmix/api/jmix/${pkg.id}/manifest`);
      assertEquals(await manifest.json(), pkg.manifest);
      const zip = await fetch(`${gw.url}/jmix/api/jmix/${pkg.id}`);
      assertEquals(new Uint8Array(await zip.arrayBuffer()), pkg.zip);
      const q = await fetch(`${gw.url}/jmix/api/jmix?studyInstanceUid=${study}`);
      assertEquals([q.status, q.headers.get("x-jmix-id")], [200, pkg.id]);
      assertEquals(new Uint8Array(await q.arrayBuffer()), pkg.zip);
      const dup = await fetch(`${gw.url}/jmix/api/jmix`, {
        method: "POST",
        body: pkg.zip as BodyInit,
      });
      assertEquals([dup.status, (await dup.json()).error.code], [409, "duplicate_package"]);
    } finally {
      await gw.stop();
      await s3.stop();
      await removeDir(dir);
    }
  },
});
