/**
 * The `hl7` endpoint over TLS with required client certificates: a sender with a certificate of
 * the configured CA gets its AA, one without a certificate is refused with a log line; and
 * `max_connections`: a connection over the limit is closed with a log line while the open ones
 * are still served.
 */
import { assert, assertEquals } from "./assert.ts";
import type { TestGateway } from "./harness.ts";
import { ackOf, hl7Message, MllpTestClient } from "./support/mllp.ts";
import { startMllpGateway } from "./support/hl7_gateway.ts";
import { makeTestCa, removeDir, tempDir, waitFor } from "./support/mod.ts";

const PIPELINE = `
[backends.echo]
service = "echo"
[pipelines.hl7]
endpoints = ["mllp"]
backends = ["echo"]
`;

async function logged(gw: TestGateway, msg: string): Promise<void> {
  await waitFor(
    () => Promise.resolve(gw.logs.some((l) => (JSON.parse(l) as { msg: string }).msg === msg)),
    { timeoutMs: 10_000, description: `log line ${msg}` },
  );
}

Deno.test({
  name: "hl7 endpoint over TLS: a client certificate of the CA is served, none is refused",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const dir = await tempDir("hl7-tls-");
    const ca = await makeTestCa(dir, "hospital");
    const server = await ca.server("mllp");
    const sender = await ca.client("lab", "LAB_SENDER");
    const { gw, port } = await startMllpGateway(PIPELINE, {
      options: `tls_cert_path = "${server.certPath}"\ntls_key_path = "${server.keyPath}"\n` +
        `tls_client_ca_path = "${ca.certPath}"`,
    });
    try {
      const caCert = await Deno.readTextFile(ca.certPath);
      const conn = await Deno.connectTls({
        hostname: "127.0.0.1",
        port,
        caCerts: [caCert],
        cert: await Deno.readTextFile(sender.certPath),
        key: await Deno.readTextFile(sender.keyPath),
      });
      const client = MllpTestClient.over(conn);
      const a = ackOf(await client.request(hl7Message("ADT^A01", "TLS-1")));
      assertEquals([a.code, a.controlId], ["AA", "TLS-1"]);
      client.close();

      // No client certificate: the connection is closed, the refusal logged.
      const bare = MllpTestClient.over(
        await Deno.connectTls({ hostname: "127.0.0.1", port, caCerts: [caCert] }),
      );
      await bare.send(hl7Message("ADT^A01", "TLS-2")).catch(() => {});
      await bare.next(5000).then(
        () => assert(false, "a sender without a certificate got an answer"),
        () => {},
      );
      await logged(gw, "HL7 TLS handshake refused");
      bare.close();
    } finally {
      await gw.stop();
      await removeDir(dir);
    }
  },
});

Deno.test({
  name: "hl7 endpoint: a connection over max_connections is closed and logged, others served",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const { gw, port } = await startMllpGateway(PIPELINE, { options: "max_connections = 2" });
    const open = [await MllpTestClient.connect(port), await MllpTestClient.connect(port)];
    try {
      // Both are being served (the listener counts them once they answered).
      for (const [i, c] of open.entries()) {
        assertEquals(ackOf(await c.request(hl7Message("ADT^A01", `MC-${i}`))).code, "AA");
      }
      const third = await MllpTestClient.connect(port);
      assert(await third.closedWithin(5000), "the third connection is closed");
      third.close();
      await logged(gw, "HL7 connection refused: max_connections reached");
      assertEquals(ackOf(await open[0].request(hl7Message("ADT^A01", "MC-again"))).code, "AA");
      // Once one leaves, a new connection is served.
      open[1].close();
      await waitFor(async () => {
        const c = await MllpTestClient.connect(port);
        try {
          return ackOf(await c.request(hl7Message("ADT^A01", "MC-new"))).code === "AA";
        } catch {
          return false;
        } finally {
          c.close();
        }
      }, { timeoutMs: 10_000, description: "a new connection served after one left" });
    } finally {
      for (const c of open) c.close();
      await gw.stop();
    }
  },
});
