/**
 * DIMSE over TLS: the dicom_scu backend (`use_tls`, CA and client certificate) stores an instance
 * into DCMTK `storescp +tls`, which requires and verifies the client certificate; a `dicom_scp`
 * endpoint with TLS and required client certificates serves DCMTK's SCUs with a certificate of its
 * CA and refuses the others; C-MOVE sub-operations reach a `[dicom.peers]` destination over TLS.
 */
import { generateInstances } from "../fixtures/dicom/generate.ts";
import { DCMTK_ENV, startDcmqrscp, startStorescp } from "../fixtures/dicom/peers.ts";
import { parseP10 } from "../gateway/dicom/mod.ts";
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { makeSelfSignedCert } from "./certs.ts";
import { startTestGateway } from "./harness.ts";
import {
  canConnect,
  type CommandResult,
  freePort,
  type IssuedCert,
  makeTestCa,
  removeDir,
  requirePeer,
  runCommand,
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
# storescp serves one association at a time: an idle pooled one would hold up the next.
association_idle_secs = 0
ca_cert_path = "${server.certPath}"
cert_path = "${client.certPath}"
key_path = "${client.keyPath}"
[pipelines.pacs]
endpoints = ["pacs"]
backends = ["pacs"]

# Trusts another certificate than the one storescp presents.
[endpoints.wrong_ca]
service = "http"
[endpoints.wrong_ca.options]
path_prefix = "/wrong-ca"
[backends.wrong_ca]
service = "dicom_scu"
timeout_secs = 5
[backends.wrong_ca.options]
aet = "TLSSCP"
host = "127.0.0.1"
port = ${port}
use_tls = true
ca_cert_path = "${client.certPath}"
cert_path = "${client.certPath}"
key_path = "${client.keyPath}"
[pipelines.wrong_ca]
endpoints = ["wrong_ca"]
backends = ["wrong_ca"]
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

      const wrong = await fetch(`${gw.url}/wrong-ca/echo`);
      const refused = await wrong.json();
      assertEquals(wrong.status, 502, JSON.stringify(refused));
      assertEquals(refused.error.code, "backend_unavailable");
      assertMatch(refused.error.message, /cannot associate with TLSSCP .*certificate/);
    } finally {
      await gw.stop();
      await scp.stop();
      await removeDir(dir);
    }
  },
});

Deno.test({
  name:
    "dicom_scp with DICOM TLS: DCMTK with a client certificate of the CA is served; none or another CA's is refused; C-MOVE to a TLS destination",
  ignore: !requirePeer("storescu", "storescu", "dcmtk") ||
    !requirePeer("openssl", "openssl", "openssl"),
  fn: async () => {
    const dir = await tempDir("scp-tls-");
    const ca = await makeTestCa(dir, "hospital");
    const rogue = await makeTestCa(dir, "rogue");
    const gatewayCert = await ca.server("gateway");
    const gatewayClient = await ca.client("gateway-client", "GWSCP");
    const modality = await ca.client("modality", "MODALITY1");
    const stranger = await rogue.client("stranger", "MODALITY1");
    const viewerCert = await ca.server("viewer");
    const seeded = await generateInstances(`${dir}/seed`, { patientPrefix: "TLSQR" });
    const [extra] = await generateInstances(`${dir}/extra`, { patientPrefix: "TLSNEW" });
    const qr = await startDcmqrscp(seeded.map((i) => i.path), { aet: "QRSCP" });
    // The C-MOVE destination speaks TLS only and requires a client certificate of the CA.
    const viewer = await startStorescp({
      aet: "VIEWER",
      args: ["+tls", viewerCert.keyPath, viewerCert.certPath, "+cf", ca.certPath],
    });
    const port = freePort();
    const plainPort = freePort();
    const gw = await startTestGateway(`
[endpoints.scp]
service = "dicom_scp"
[endpoints.scp.options]
local_aet = "GWSCP"
bind_addr = "127.0.0.1"
port = ${port}
enable_find = true
enable_move = true
enable_store = true
storage_dir = "{DIR}/received"
tls_cert_path = "${gatewayCert.certPath}"
tls_key_path = "${gatewayCert.keyPath}"
tls_client_ca_path = "${ca.certPath}"

# Debian's movescu has no TLS: it asks for the C-MOVE on a plain listener (of the same pipeline).
[endpoints.scp_plain]
service = "dicom_scp"
[endpoints.scp_plain.options]
local_aet = "GWPLAIN"
bind_addr = "127.0.0.1"
port = ${plainPort}
enable_move = true
allowed_calling_aets = ["MOVER"]

[backends.pacs]
service = "dicom_scu"
timeout_secs = 10
[backends.pacs.options]
aet = "QRSCP"
host = "127.0.0.1"
port = ${qr.port}

[pipelines.dimse]
endpoints = ["scp", "scp_plain"]
backends = ["pacs"]

[dicom.peers.VIEWER]
host = "127.0.0.1"
port = ${viewer.port}
use_tls = true
ca_cert_path = "${ca.certPath}"
cert_path = "${gatewayClient.certPath}"
key_path = "${gatewayClient.keyPath}"
`);
    const tls = (c: IssuedCert) => ["+tls", c.keyPath, c.certPath, "+cf", ca.certPath];
    const scu = (cmd: string, args: string[], files: string[] = []) =>
      runCommand(cmd, [
        "-aet",
        "MODALITY1",
        "-aec",
        "GWSCP",
        ...args,
        "127.0.0.1",
        String(port),
        ...files,
      ], {
        timeoutMs: 20_000,
        env: DCMTK_ENV,
      });
    const out = (r: CommandResult) => `${r.stdout}\n${r.stderr}`;
    try {
      const echo = await scu("echoscu", tls(modality));
      assertEquals(echo.code, 0, out(echo));
      const stored = await scu("storescu", tls(modality), [extra.path]);
      assertEquals(stored.code, 0, out(stored));
      const kept = `${gw.dir}/received/${extra.studyUid}/${extra.sopInstanceUid}.dcm`;
      assertEquals(parseP10(await Deno.readFile(kept)).meta.sopInstanceUid, extra.sopInstanceUid);

      // No certificate, another CA's certificate, plain TCP: no association.
      const anonymous = await scu("echoscu", ["+tla", "+cf", ca.certPath]);
      assert(anonymous.code !== 0, out(anonymous));
      const foreign = await scu("echoscu", tls(stranger));
      assert(foreign.code !== 0, out(foreign));
      const plain = await scu("echoscu", []);
      assert(plain.code !== 0, out(plain));
      assertMatch(gw.logs.join("\n"), /DICOM TLS handshake refused/);
      const refusals = gw.logs.filter((l) => l.includes("DICOM TLS handshake refused")).join("\n");
      assertMatch(refusals, /peer sent no certificates/);
      // Another CA's certificate is named as such (Deno's node:tls alone says "socket hang up").
      const reasons = gw.logs.filter((l) => l.includes("DICOM TLS handshake refused"))
        .map((l) => String(JSON.parse(l).error));
      assert(
        reasons.includes(
          'unknown issuer: the client certificate "CN=MODALITY1" is issued by "CN=rogue test CA", ' +
            "which is not a CA of tls_client_ca_path",
        ),
        refusals,
      );
      assert(!refusals.includes("socket hang up"), refusals);
      assertMatch(refusals, /wrong version number/);

      // C-MOVE: the gateway opens a TLS association to the destination with its own certificate.
      const study = seeded[0];
      const moved = await runCommand("movescu", [
        "-aet",
        "MOVER",
        "-aec",
        "GWPLAIN",
        "-S",
        "-aem",
        "VIEWER",
        "-k",
        "QueryRetrieveLevel=STUDY",
        "-k",
        `StudyInstanceUID=${study.studyUid}`,
        "127.0.0.1",
        String(plainPort),
      ], { timeoutMs: 20_000, env: DCMTK_ENV });
      assertEquals(moved.code, 0, out(moved));
      const received: string[] = [];
      for await (const e of Deno.readDir(viewer.dir)) {
        received.push(parseP10(await Deno.readFile(`${viewer.dir}/${e.name}`)).meta.sopInstanceUid);
      }
      const expected = seeded.filter((i) => i.studyUid === study.studyUid).map((i) =>
        i.sopInstanceUid
      );
      assertEquals(received.sort(), expected.sort());
    } finally {
      await gw.stop();
      await qr.stop();
      await viewer.stop();
      await removeDir(dir);
    }
  },
});
