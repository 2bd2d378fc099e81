/**
 * Store-and-forward to an HL7 receiver: an `hl7` backend with a durable `fifo` queue whose
 * receiver (`@medplum/hl7`'s Hl7Server) is down. The sender is answered once each message is on
 * disk; the gateway process is killed with SIGKILL and started again in between; once the
 * receiver is up every message arrives, once, in the order accepted. An AE from the receiver is
 * retried by the queue (not by the backend), and the messages behind it wait.
 */
import { assertEquals } from "./assert.ts";
import { startTestGateway } from "./harness.ts";
import { adtA01, startHl7Receiver } from "./support/hl7_receiver.ts";
import { freePort, startGateway, waitFor } from "./support/mod.ts";
import { Hl7Client } from "@medplum/hl7";
import { Hl7Message } from "@medplum/core";

const ER7 = "x-application/hl7-v2+er7";

function pipeline(receiverPort: number, queueDir: string): string {
  return `
[endpoints.in]
service = "http"
[endpoints.in.options]
path_prefix = "/hl7"

[backends.adt]
service = "hl7"
[backends.adt.options]
host = "127.0.0.1"
port = ${receiverPort}
connect_timeout_secs = 2
ack_timeout_secs = 5

[backends.adt.queue]
dir = "${queueDir}"
ordering = "fifo"
initial_backoff_ms = 50
max_backoff_ms = 200

[pipelines.p]
endpoints = ["in"]
backends = ["adt"]
`;
}

function processConfig(
  port: number,
  receiverPort: number,
  queueDir: string,
  mllpPort?: number,
): string {
  const mllp = mllpPort === undefined ? "" : `
[endpoints.mllp_in]
service = "hl7"
[endpoints.mllp_in.options]
bind_addr = "127.0.0.1"
port = ${mllpPort}
`;
  return `
[network.main]
bind = "127.0.0.1"
port = ${port}
[management]
bind = "127.0.0.1"
port = ${freePort()}
[logging]
level = "warn"
${mllp}
${
    pipeline(receiverPort, queueDir).replace(
      'endpoints = ["in"]',
      `endpoints = ["in"${mllp ? ', "mllp_in"' : ""}]`,
    )
  }`;
}

/** Posts `ids` one after the other; each must be accepted (202) with a delivery id. */
async function sendAll(base: string, ids: string[]): Promise<void> {
  for (const id of ids) {
    const res = await fetch(`${base}/hl7/adt`, {
      method: "POST",
      headers: { "content-type": ER7 },
      body: adtA01(id),
    });
    const body = await res.json();
    assertEquals(res.status, 202, `${id}: ${JSON.stringify(body)}`);
    assertEquals(body.status, "queued");
  }
}

Deno.test("hl7 store-and-forward: an AE is retried by the queue and the messages behind it wait", async () => {
  const rcv = await startHl7Receiver();
  let refusals = 2;
  rcv.reply = (message) => {
    const id = message.getSegment("MSH")?.getField(10)?.toString();
    if (id === "Q1" && refusals > 0) {
      refusals--;
      return { ack: "AE", err: "database busy" };
    }
    return { ack: "AA" };
  };
  const queueDir = await Deno.makeTempDir({ prefix: "gw-hl7-queue-" });
  const gw = await startTestGateway(pipeline(rcv.port, queueDir), { workers: 1 });
  try {
    await sendAll(gw.url, ["Q1", "Q2", "Q3"]);
    await rcv.received(5);
    await waitFor(async () => {
      const q = (await (await gw.mgmtFetch("/admin/queues")).json()).queues[0];
      return q.depth === 0 && q.in_flight === 0;
    }, { timeoutMs: 30_000, description: "the queue drained" });
    assertEquals(rcv.controlIds, ["Q1", "Q1", "Q1", "Q2", "Q3"]);
    const q = (await (await gw.mgmtFetch("/admin/queues")).json()).queues[0];
    assertEquals(q.dead ?? 0, 0);
  } finally {
    await gw.stop();
    await rcv.stop();
    await Deno.remove(queueDir, { recursive: true }).catch(() => {});
  }
});

/** Sends `ids` over MLLP with `@medplum/hl7`'s Hl7Client; each must be acknowledged AA. */
async function sendAllMllp(port: number, ids: string[]): Promise<void> {
  const client = new Hl7Client({ host: "127.0.0.1", port });
  try {
    for (const id of ids) {
      const ack = await client.sendAndWait(Hl7Message.parse(adtA01(id)), { timeoutMs: 10_000 });
      const msa = ack.getSegment("MSA");
      assertEquals(msa?.getField(1)?.toString(), "AA", `${id}: ${ack.toString()}`);
      assertEquals(msa?.getField(2)?.toString(), id);
    }
  } finally {
    await client.close();
  }
}

/**
 * One pair of processes for both senders (an HTTP client answered 202, an MLLP `Hl7Client`
 * answered AA): each kill -9 and restart is a real process's, and both senders' messages cross it
 * into the one fifo queue; two more gateway processes for the second sender (~1.4 s of CPU) would
 * only repeat the same kill and restart.
 */
Deno.test("hl7 store-and-forward: receiver down, kill -9 between, every message arrives once in order (HTTP 202; over MLLP Hl7Client gets AA once on disk)", async () => {
  const receiverPort = freePort();
  const queueDir = await Deno.makeTempDir({ prefix: "gw-hl7-queue-" });
  const first = Array.from({ length: 20 }, (_, i) => `BEFORE${String(i).padStart(3, "0")}`);
  const second = Array.from({ length: 10 }, (_, i) => `AFTER${String(i).padStart(3, "0")}`);
  const firstMllp = Array.from({ length: 10 }, (_, i) => `MLLPA${i}`);
  const secondMllp = Array.from({ length: 5 }, (_, i) => `MLLPB${i}`);
  try {
    // Accepted while the receiver is down, then the process is killed without warning.
    const port1 = freePort();
    const mllp1 = freePort();
    const gw1 = await startGateway({
      configText: processConfig(port1, receiverPort, queueDir, mllp1),
    });
    await sendAll(`http://127.0.0.1:${port1}`, first);
    await sendAllMllp(mllp1, firstMllp);
    gw1.process.kill("SIGKILL");
    await gw1.process.status;
    await gw1.stop().catch(() => {});

    // A new process takes the queue back and accepts more, the receiver still down.
    const port2 = freePort();
    const mllp2 = freePort();
    const gw2 = await startGateway({
      configText: processConfig(port2, receiverPort, queueDir, mllp2),
    });
    try {
      await sendAll(`http://127.0.0.1:${port2}`, second);
      await sendAllMllp(mllp2, secondMllp);
      const rcv = await startHl7Receiver(receiverPort);
      try {
        const all = [...first, ...firstMllp, ...second, ...secondMllp];
        await rcv.received(all.length);
        await waitFor(async () => {
          const q = (await (await gw2.mgmtFetch("/admin/queues")).json()).queues[0];
          return q.depth === 0 && q.in_flight === 0;
        }, { timeoutMs: 30_000, description: "the queue drained" });
        assertEquals(rcv.controlIds, all);
        // Byte for byte what was posted.
        assertEquals(rcv.messages[0], adtA01(first[0]));
      } finally {
        await rcv.stop();
      }
    } finally {
      await gw2.stop();
    }
  } finally {
    await Deno.remove(queueDir, { recursive: true }).catch(() => {});
  }
});
