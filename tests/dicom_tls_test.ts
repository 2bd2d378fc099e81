/**
 * DIMSE over TLS: the dicom_scu backend (`use_tls`, CA and client certificate) stores an instance
 * into DCMTK `storescp +tls`, which requires and verifies the client certificate.
 */
import { generateInstances } from "../fixtures/dicom/generate.ts";
import { DCMTK_ENV } from "../fixtures/dicom/peers.ts";
import { parseP10 } from "../gateway/dicom/mod.ts";
import { assertEquals } from "./assert.ts";
import { makeSelfSignedCert } from "./certs.ts";
import { startTestGateway } from "./harness.ts";
import {
  canConnect,
  freePort,
  removeDir,
  requirePeer,
  spawnCaptured,
  tempDir,
  waitReady,
} from "./support/mod.ts";

Deno.test({
  name: "dicom_scu with use_tls: C-ECHO and C-STORE to storescp +tls with a client certificate",
  ignore: !requirePeer("storescp", "storescp", "dcmtk") ||
    !requirePeer("openssl", "openssl", "openssl"),
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const dir = await tempDir("dicom-tls-");
    const server = await makeSelfSignedCert(dir, "server");
    const client = await makeSelfSignedCert(dir, "client");
    const [instance] = await generateInstances(`${dir}/in`, { patientPrefix: "TLS" });
    await Deno.mkdir(`${dir}/out`);
    const port = freePort();
    const scp = spawnCaptured("storescp", [
      "-aet",
      "TLSSCP",
      "+tls",
      server.keyPath,
      server.certPath,
      "+cf",
      client.certPath,
      "-od",
      `${dir}/out`,
      String(port),
    ], { env: DCMTK_ENV });
    await waitReady(scp, {
      name: "storescp",
      check: () => canConnect(port),
      description: `storescp (TLS) on ${port}`,
      timeoutMs: 10_000,
    });
    const gw = await startTestGateway(`
[endpoints.pacs]
service = "http"
[endpoints.pacs.options]
path_prefix = "/pacs"
[backends.pacs]
service = "dicom_scu"
[backends.pacs.options]
aet = "TLSSCP"
host = "127.0.0.1"
port = ${port}
use_tls = true
ca_cert_path = "${server.certPath}"
cert_path = "${client.certPath}"
key_path = "${client.keyPath}"
[pipelines.pacs]
endpoints = ["pacs"]
backends = ["pacs"]
`);
    try {
      const echo = await fetch(`${gw.url}/pacs/echo`);
      assertEquals(echo.status, 200, await echo.clone().text());
      assertEquals((await echo.json()).status, "0x0000");
      const res = await fetch(`${gw.url}/pacs/studies`, {
        method: "POST",
        headers: { "content-type": "application/dicom" },
        body: await Deno.readFile(instance.path),
      });
      const body = await res.json();
      assertEquals(res.status, 200, JSON.stringify(body));
      const stored: string[] = [];
      for await (const e of Deno.readDir(`${dir}/out`)) {
        stored.push(parseP10(await Deno.readFile(`${dir}/out/${e.name}`)).meta.sopInstanceUid);
      }
      assertEquals(stored, [instance.sopInstanceUid]);
    } finally {
      await gw.stop();
      await scp.stop();
      await removeDir(dir);
    }
  },
});
