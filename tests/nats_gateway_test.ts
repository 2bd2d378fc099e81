/**
 * A gateway whose backend queue is `store = "nats"` (Debian's nats-server with JetStream, started
 * here): 202 with the delivery id, delivery to the upstream, and the operations the file store has
 * through the same management API routes and metrics: the queue's figures, dead letters listed,
 * viewed, sent again and purged; `/metrics` counts the deliveries. Over MLLP, an HL7 sender gets
 * its AA once JetStream holds the message, and a `fifo` queue forwards them in order once the
 * receiver is up. Over DIMSE, DCMTK storescu gets C-STORE Success from a `dicom_scp` endpoint once
 * JetStream holds each instance, and DCMTK storescp receives them through the queued `dicom_scu`.
 */
import { assert, assertEquals } from "./assert.ts";
import { startTestGateway } from "./harness.ts";
import { requirePeer } from "./support/peers.ts";
import { startNats } from "./support/nats.ts";
import { waitFor } from "./support/wait.ts";
import { freePort } from "./support/ports.ts";
import { adtA01, startHl7Receiver } from "./support/hl7_receiver.ts";
import { Hl7Client } from "@medplum/hl7";
import { Hl7Message } from "@medplum/core";
import { runCommand } from "./support/process.ts";
import { generateInstances } from "../fixtures/dicom/generate.ts";
import { DCMTK_ENV, startStorescp } from "../fixtures/dicom/peers.ts";

Deno.test({
  name: "nats gateway: 202, delivery, and the management API and metrics of the file store",
  ignore: !requirePeer("NATS JetStream", "nats-server", "nats-server"),
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    await using nats = await startNats({ size: 1, auth: { token: "t0ken-for-tests" } });
    let refuse = true;
    const received: string[] = [];
    const upstream = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      async (req) => {
        const body = await req.text();
        if (body.includes("bad") && refuse) return new Response("no such patient", { status: 400 });
        received.push(body);
        return new Response("{}", { status: 201 });
      },
    );
    const gw = await startTestGateway(`
[endpoints.in]
service = "http"
[endpoints.in.options]
path_prefix = "/in"
[backends.out]
service = "http"
retries = 0
[backends.out.options]
base_url = "http://127.0.0.1:${upstream.addr.port}"
[backends.out.queue]
store = "nats"
nats_servers = ${JSON.stringify(nats.servers)}
nats_token = "t0ken-for-tests"
nats_stream = "GW_TEST_OUT"
initial_backoff_ms = 50
max_backoff_ms = 200
[pipelines.p]
endpoints = ["in"]
backends = ["out"]
`);
    const queue = async () => {
      const res = await gw.mgmtFetch("/admin/queues");
      return (await res.json()).queues[0] as Record<string, unknown>;
    };
    const post = async (body: string) => {
      const res = await fetch(`${gw.url}/in/Patient`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      });
      const json = await res.json();
      assertEquals(res.status, 202);
      assertEquals(res.headers.get("x-delivery-id"), json.delivery_id);
      return json.delivery_id as string;
    };
    try {
      for (let i = 0; i < 3; i++) await post(JSON.stringify({ good: i }));
      const bad = await post(JSON.stringify({ bad: 1 }));
      await waitFor(async () => {
        const q = await queue();
        return q.delivered_total === 3 && q.dead === 1 && q.depth === 0;
      }, { timeoutMs: 15_000, description: "3 delivered, 1 dead letter" });
      const q = await queue();
      assertEquals(q.store, "nats");
      assertEquals(q.dir, "nats:GW_TEST_OUT");
      assertEquals(q.degraded, null);

      const listed = await (await gw.mgmtFetch("/admin/queues/out/messages?state=dead")).json();
      assertEquals(listed.messages.length, 1);
      assertEquals(listed.messages[0].id, bad);
      assertEquals(listed.messages[0].dead.reason, "HTTP 400");
      assertEquals(listed.messages[0].dead.answer, "no such patient");
      const one = await (await gw.mgmtFetch(`/admin/queues/out/messages/${bad}`)).json();
      assertEquals(one.state, "dead");
      assertEquals(one.path, "/Patient");

      refuse = false;
      const retried = await gw.mgmtFetch("/admin/queues/out/retry", {
        method: "POST",
        body: JSON.stringify({ id: bad }),
      });
      assertEquals((await retried.json()).requeued, 1);
      await waitFor(() => Promise.resolve(received.some((b) => b.includes("bad"))), {
        timeoutMs: 15_000,
        description: "the dead letter delivered once sent again",
      });

      refuse = true;
      await post(JSON.stringify({ bad: 2 }));
      await waitFor(async () => (await queue()).dead === 1, {
        timeoutMs: 15_000,
        description: "a second dead letter",
      });
      const purged = await gw.mgmtFetch("/admin/queues/out/dead?confirm=out", { method: "DELETE" });
      assertEquals((await purged.json()).purged, 1);
      await waitFor(async () => (await queue()).dead === 0, {
        timeoutMs: 5_000,
        description: "no dead letter left",
      });

      const metrics = await (await gw.mgmtFetch("/metrics")).text();
      const delivered = metrics.match(/^gateway_queue_delivered_total\{backend="out"\} (\d+)/m);
      assert(delivered && Number(delivered[1]) === 4, metrics.slice(0, 2000));
      assert(/^gateway_queue_dead_lettered_total\{backend="out"\} 2/m.test(metrics));
    } finally {
      await gw.stop();
      await upstream.shutdown();
    }
  },
});

Deno.test({
  name:
    "nats gateway: HL7 over MLLP acknowledged AA once JetStream holds it; fifo forwards in order",
  ignore: !requirePeer("NATS JetStream", "nats-server", "nats-server"),
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    await using nats = await startNats({ size: 1 });
    const receiverPort = freePort();
    const mllpPort = freePort();
    const gw = await startTestGateway(`
[endpoints.mllp_in]
service = "hl7"
[endpoints.mllp_in.options]
bind_addr = "127.0.0.1"
port = ${mllpPort}
[backends.adt]
service = "hl7"
[backends.adt.options]
host = "127.0.0.1"
port = ${receiverPort}
connect_timeout_secs = 2
ack_timeout_secs = 5
[backends.adt.queue]
store = "nats"
nats_servers = ${JSON.stringify(nats.servers)}
ordering = "fifo"
initial_backoff_ms = 50
max_backoff_ms = 200
[pipelines.p]
endpoints = ["mllp_in"]
backends = ["adt"]
`);
    const ids = Array.from({ length: 10 }, (_, i) => `NATS${i}`);
    try {
      const client = new Hl7Client({ host: "127.0.0.1", port: mllpPort });
      try {
        for (const id of ids) {
          const ack = await client.sendAndWait(Hl7Message.parse(adtA01(id)), {
            timeoutMs: 15_000,
          });
          const msa = ack.getSegment("MSA");
          assertEquals(msa?.getField(1)?.toString(), "AA", ack.toString());
          assertEquals(msa?.getField(2)?.toString(), id);
        }
      } finally {
        await client.close();
      }
      // The receiver is down: every acknowledged message waits in the stream.
      await waitFor(async () => {
        const res = await gw.mgmtFetch("/admin/queues");
        return (await res.json()).queues[0].depth === ids.length;
      }, { timeoutMs: 10_000, description: "10 messages waiting in JetStream" });
      const rcv = await startHl7Receiver(receiverPort);
      try {
        await rcv.received(ids.length);
        assertEquals(rcv.controlIds.slice(0, ids.length), ids);
      } finally {
        await rcv.stop();
      }
    } finally {
      await gw.stop();
    }
  },
});

Deno.test({
  name:
    "nats gateway: storescu gets C-STORE Success once JetStream holds the instances; storescp receives them",
  ignore: !requirePeer("NATS JetStream", "nats-server", "nats-server") ||
    !requirePeer("storescu", "storescu", "dcmtk"),
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    await using nats = await startNats({ size: 1 });
    const dir = await Deno.makeTempDir({ prefix: "gw-nats-dicom-" });
    const instances = await generateInstances(`${dir}/in`, {
      patientPrefix: "NATSQ",
      instancesPerSeries: 4,
    });
    const archive = await startStorescp({ aet: "ARCHIVE" });
    const scpPort = freePort();
    const gw = await startTestGateway(`
[endpoints.scp]
service = "dicom_scp"
[endpoints.scp.options]
local_aet = "GATEWAY"
bind_addr = "127.0.0.1"
port = ${scpPort}
enable_store = true
[backends.archive]
service = "dicom_scu"
timeout_secs = 10
[backends.archive.options]
aet = "ARCHIVE"
host = "127.0.0.1"
port = ${archive.port}
[backends.archive.queue]
store = "nats"
nats_servers = ${JSON.stringify(nats.servers)}
nats_max_payload = 4096
initial_backoff_ms = 100
max_backoff_ms = 500
[pipelines.dimse]
endpoints = ["scp"]
backends = ["archive"]
`);
    try {
      const sent = await runCommand(
        "storescu",
        [
          "-aet",
          "MODALITY",
          "-aec",
          "GATEWAY",
          "127.0.0.1",
          String(scpPort),
          ...instances.map((i) => i.path),
        ],
        { timeoutMs: 30_000, env: DCMTK_ENV },
      );
      assertEquals(sent.code, 0, sent.stderr);
      await waitFor(
        () => Promise.resolve([...Deno.readDirSync(archive.dir)].length === instances.length),
        {
          timeoutMs: 20_000,
          description: "every instance at storescp",
        },
      );
      await waitFor(async () => {
        const q = (await (await gw.mgmtFetch("/admin/queues")).json()).queues[0];
        return q.delivered_total === instances.length && q.depth === 0;
      }, { timeoutMs: 10_000, description: "the queue delivered and empty" });
    } finally {
      await gw.stop();
      await archive.stop();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  },
});
