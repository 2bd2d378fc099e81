/**
 * The `hl7` endpoint against MLLP senders we did not write, from npm: `@medplum/hl7`'s `Hl7Client`
 * (original mode, enhanced mode, a backend failure) and `node-hl7-client`'s `Client` and outbound
 * connection (`createConnection`, `sendMessage`, its response handler); both run under Deno.
 */
import { Hl7Message } from "@medplum/core";
import { Hl7Client, ReturnAckCategory } from "@medplum/hl7";
import { Client, Message } from "node-hl7-client";
import { assertEquals } from "./assert.ts";
import { startTestGateway } from "./harness.ts";
import { hl7Message } from "./support/mllp.ts";
import { freePort } from "./support/mod.ts";

/** Longest wait for an answer. */
const WAIT = 10_000;

function config(port: number, backendToml: string): string {
  return `
[endpoints.mllp]
service = "hl7"
[endpoints.mllp.options]
bind_addr = "127.0.0.1"
port = ${port}

${backendToml}

[pipelines.hl7]
endpoints = ["mllp"]
backends = ["main"]
`;
}

Deno.test({
  name: "hl7 endpoint and @medplum/hl7 Hl7Client: AA, CA in enhanced mode, AE on a backend failure",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const failing = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen() {} },
      (req) =>
        new URL(req.url).pathname.includes("fail")
          ? new Response("down", { status: 500 })
          : new Response("ok"),
    );
    const port = freePort();
    const gw = await startTestGateway(config(
      port,
      `[backends.main]
service = "http"
[backends.main.options]
base_url = "http://127.0.0.1:${failing.addr.port}/ok"`,
    ));
    const client = new Hl7Client({ host: "127.0.0.1", port });
    try {
      const ack = await client.sendAndWait(
        Hl7Message.parse(hl7Message("ADT^A01^ADT_A01", "MP-1")),
        {
          timeoutMs: WAIT,
        },
      );
      assertEquals(ack.getSegment("MSA")?.getField(1)?.toString(), "AA");
      assertEquals(ack.getSegment("MSA")?.getField(2)?.toString(), "MP-1");
      assertEquals(ack.getSegment("MSH")?.getField(9)?.toString(), "ACK^A01^ACK");
      // Enhanced mode, MSH-15 = AL, MSH-16 = NE: the commit ACK is the first and only answer.
      const commit = await client.sendAndWait(
        Hl7Message.parse(hl7Message("ORU^R01^ORU_R01", "MP-2", { acceptAck: "AL", appAck: "NE" })),
        { returnAck: ReturnAckCategory.FIRST, timeoutMs: WAIT },
      );
      assertEquals(commit.getSegment("MSA")?.getField(1)?.toString(), "CA");
      assertEquals(commit.getSegment("MSA")?.getField(2)?.toString(), "MP-2");
      // MSH-16 = AL: Hl7Client passes the CA over and waits for the application ACK.
      const app = await client.sendAndWait(
        Hl7Message.parse(hl7Message("ORU^R01^ORU_R01", "MP-3", { acceptAck: "AL", appAck: "AL" })),
        { timeoutMs: WAIT },
      );
      assertEquals(app.getSegment("MSA")?.getField(1)?.toString(), "AA");
      assertEquals(app.getSegment("MSA")?.getField(2)?.toString(), "MP-3");
    } finally {
      await client.close();
      await gw.stop();
    }
    const port2 = freePort();
    const gw2 = await startTestGateway(config(
      port2,
      `[backends.main]
service = "http"
[backends.main.options]
base_url = "http://127.0.0.1:${failing.addr.port}/fail"`,
    ));
    const client2 = new Hl7Client({ host: "127.0.0.1", port: port2 });
    try {
      const ack = await client2.sendAndWait(Hl7Message.parse(hl7Message("ADT^A08", "MP-4")), {
        timeoutMs: WAIT,
      });
      assertEquals(ack.getSegment("MSA")?.getField(1)?.toString(), "AE");
      assertEquals(ack.getSegment("MSA")?.getField(2)?.toString(), "MP-4");
    } finally {
      await client2.close();
      await gw2.stop();
      await failing.shutdown();
    }
  },
});

Deno.test({
  name: "hl7 endpoint and node-hl7-client: messages sent on an outbound connection get their AA",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const port = freePort();
    const gw = await startTestGateway(config(port, `[backends.main]\nservice = "echo"`));
    const acks: { code: string; id: string }[] = [];
    let arrived: () => void = () => {};
    const client = new Client({ host: "127.0.0.1" });
    const outbound = client.createConnection({ port, waitAck: true }, (res) => {
      const msg = res.getMessage();
      acks.push({ code: msg.get("MSA.1").toString(), id: msg.get("MSA.2").toString() });
      arrived();
    });
    try {
      // One message at a time, each after the ACK of the one before, as MLLP senders work (this
      // client reads only the last of several ACK frames that arrive in one TCP read).
      for (const id of ["NC-1", "NC-2", "NC-3"]) {
        const acked = new Promise<void>((resolve) => (arrived = resolve));
        await outbound.sendMessage(new Message({ text: hl7Message("ADT^A04^ADT_A01", id) }));
        let timer: ReturnType<typeof setTimeout> | undefined;
        await Promise.race([
          acked,
          new Promise((_, reject) =>
            timer = setTimeout(() => reject(new Error(`no ACK for ${id}`)), WAIT)
          ),
        ]).finally(() => clearTimeout(timer));
      }
      assertEquals(acks, [
        { code: "AA", id: "NC-1" },
        { code: "AA", id: "NC-2" },
        { code: "AA", id: "NC-3" },
      ]);
    } finally {
      await outbound.close();
      client.closeAll();
      await gw.stop();
    }
  },
});
