/**
 * The `hl7` endpoint in front of a backend with a durable queue: the sender gets its `AA` (or
 * `CA`) once the message is on disk while the receiver is down, and every message arrives once it
 * is back, in order (`fifo`).
 */
import { assertEquals } from "./assert.ts";
import { ackOf, hl7Message, MllpTestClient } from "./support/mllp.ts";
import { startMllpGateway } from "./support/hl7_gateway.ts";
import { freePort, waitFor } from "./support/mod.ts";

Deno.test({
  name: "hl7 endpoint with a queued backend: AA/CA once on disk, delivered in order later",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const upstreamPort = freePort();
    const { gw, port } = await startMllpGateway(`
[backends.lis]
service = "http"
timeout_secs = 2
[backends.lis.options]
base_url = "http://127.0.0.1:${upstreamPort}/hl7"
[backends.lis.queue]
dir = "{DIR}/queues/lis"
ordering = "fifo"
initial_backoff_ms = 50
max_backoff_ms = 200

[pipelines.hl7]
endpoints = ["mllp"]
backends = ["lis"]
`);
    const client = await MllpTestClient.connect(port);
    const got: string[] = [];
    let upstream: Deno.HttpServer | undefined;
    try {
      // The receiver is down: each message is acknowledged once it is in the queue's directory.
      for (const id of ["Q-1", "Q-2", "Q-3"]) {
        const a = ackOf(await client.request(hl7Message("ADT^A01", id)));
        assertEquals([a.code, a.controlId], ["AA", id]);
      }
      const c = ackOf(
        await client.request(hl7Message("ADT^A08", "Q-4", { acceptAck: "AL", appAck: "AL" })),
      );
      // Queued: the commit ACK only (the application's answer is not known yet).
      assertEquals([c.code, c.controlId], ["CA", "Q-4"]);
      const files = [...Deno.readDirSync(`${gw.dir}/queues/lis`)].length;
      assertEquals(files > 0, true, "the queue holds the messages on disk");

      upstream = Deno.serve(
        { hostname: "127.0.0.1", port: upstreamPort, onListen() {} },
        async (req) => {
          const text = await req.text();
          got.push(/\|(Q-\d)\|/.exec(text)?.[1] ?? "?");
          return new Response("ok");
        },
      );
      await waitFor(() => Promise.resolve(got.length >= 4), {
        timeoutMs: 15_000,
        description: "the four queued messages delivered",
      });
      assertEquals(got, ["Q-1", "Q-2", "Q-3", "Q-4"]);
    } finally {
      client.close();
      await gw.stop();
      await upstream?.shutdown();
    }
  },
});
