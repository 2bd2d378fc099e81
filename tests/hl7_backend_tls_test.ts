/**
 * The `hl7` backend over TLS to `node-hl7-server` listening with TLS and asking for a client
 * certificate (node's tls server, the CA of tests/support/test_ca.ts): the gateway's certificate
 * is accepted, a gateway without one is refused, and a receiver whose certificate does not chain
 * to `ca_cert_path` is not trusted.
 */
import { assertEquals } from "./assert.ts";
import { startTestGateway } from "./harness.ts";
import { adtA01 } from "./support/hl7_receiver.ts";
import { freePort, removeDir, requirePeer, tempDir } from "./support/mod.ts";
import { makeTestCa } from "./support/test_ca.ts";
import { Server as NodeHl7Server } from "node-hl7-server";

Deno.test({
  name: "hl7 backend over TLS: node-hl7-server with client certificates; refusals both ways",
  ignore: !requirePeer("openssl", "openssl", "openssl"),
  fn: async () => {
    const dir = await tempDir("gw-hl7-tls-");
    const ca = await makeTestCa(dir, "hospital");
    const rogue = await makeTestCa(dir, "rogue");
    const server = await ca.server("hl7-receiver");
    const client = await ca.client("gateway", "edge-gateway");
    const port = freePort();
    const hl7 = new NodeHl7Server({
      bindAddress: "127.0.0.1",
      tls: {
        key: await Deno.readTextFile(server.keyPath),
        cert: server.cert,
        ca: await Deno.readTextFile(ca.certPath),
        requestCert: true,
      },
    });
    const seen: string[] = [];
    const inbound = hl7.createInbound({ port }, async (req, res) => {
      seen.push(req.getMessage().get("MSH.10").toString());
      await res.sendResponse("AA");
    });
    await new Promise<void>((resolve) => inbound.on("listen", () => resolve()));
    const backend = (name: string, options: string) => `
[endpoints.${name}]
service = "http"
[endpoints.${name}.options]
path_prefix = "/${name}"
[backends.${name}]
service = "hl7"
[backends.${name}.options]
host = "localhost"
port = ${port}
use_tls = true
messages_per_connection = 1
connect_timeout_secs = 5
ack_timeout_secs = 5
${options}
[pipelines.${name}]
endpoints = ["${name}"]
backends = ["${name}"]
`;
    const gw = await startTestGateway(
      backend(
        "mtls",
        `ca_cert_path = "${ca.certPath}"\ncert_path = "${client.certPath}"\nkey_path = "${client.keyPath}"`,
      ) +
        backend("nocert", `ca_cert_path = "${ca.certPath}"`) +
        backend("untrusted", `ca_cert_path = "${rogue.certPath}"`),
      { workers: 1 },
    );
    const post = async (path: string, id: string) => {
      const res = await fetch(`${gw.url}/${path}/adt`, {
        method: "POST",
        headers: { "content-type": "x-application/hl7-v2+er7" },
        body: adtA01(id),
      });
      return { status: res.status, body: await res.text(), ack: res.headers.get("x-hl7-ack-code") };
    };
    try {
      const ok = await post("mtls", "TLS1");
      assertEquals([ok.status, ok.ack], [200, "AA"], ok.body);
      const nocert = await post("nocert", "TLS2");
      assertEquals(nocert.status, 502, nocert.body);
      const untrusted = await post("untrusted", "TLS3");
      assertEquals(untrusted.status, 502, untrusted.body);
      assertEquals(JSON.parse(untrusted.body).error.code, "backend_unavailable");
      assertEquals(seen, ["TLS1"]);
    } finally {
      await gw.stop();
      await inbound.close();
      await removeDir(dir);
    }
  },
});
