/**
 * MLLP in and out: an `hl7` endpoint in front of an `hl7` backend whose receiver is `@medplum/hl7`'s
 * Hl7Server. The receiver's own ACK reaches the sender (AA, and AE/AR with its ERR text) when it
 * acknowledges the sender's control id; a receiver that is down is our AE.
 */
import { assertEquals, assertMatch } from "./assert.ts";
import { ackOf, hl7Message, MllpTestClient } from "./support/mllp.ts";
import { startMllpGateway } from "./support/hl7_gateway.ts";
import { startHl7Receiver } from "./support/hl7_receiver.ts";

Deno.test({
  name:
    "hl7 endpoint -> hl7 backend -> Hl7Server: the receiver's ACK is relayed, AE when it is down",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const rcv = await startHl7Receiver();
    rcv.reply = (message) => {
      const id = message.getSegment("MSH")?.getField(10)?.toString();
      if (id === "RL-AE") return { ack: "AE", err: "unknown patient" };
      if (id === "RL-AR") return { ack: "AR", err: "unsupported event" };
      return { ack: "AA" };
    };
    const { gw, port } = await startMllpGateway(`
[backends.rcv]
service = "hl7"
timeout_secs = 10
[backends.rcv.options]
host = "127.0.0.1"
port = ${rcv.port}
ack_timeout_secs = 5

[pipelines.relay]
endpoints = ["mllp"]
backends = ["rcv"]
`);
    const client = await MllpTestClient.connect(port);
    try {
      const aa = await client.request(hl7Message("ADT^A01^ADT_A01", "RL-AA"));
      assertEquals([ackOf(aa).code, ackOf(aa).controlId], ["AA", "RL-AA"]);
      await rcv.received(1);
      assertEquals(rcv.controlIds, ["RL-AA"]);
      // Hl7Server's own ACK, not one of ours: its MSA-3 says "OK".
      assertMatch(aa, /\rMSA\|AA\|RL-AA\|OK/);

      const ae = await client.request(hl7Message("ADT^A01^ADT_A01", "RL-AE"));
      assertEquals([ackOf(ae).code, ackOf(ae).controlId], ["AE", "RL-AE"]);
      assertMatch(ackOf(ae).err, /unknown patient/);
      const ar = await client.request(hl7Message("ADT^A08^ADT_A01", "RL-AR"));
      assertEquals([ackOf(ar).code, ackOf(ar).controlId], ["AR", "RL-AR"]);
      assertMatch(ackOf(ar).err, /unsupported event/);

      await rcv.stop();
      const down = ackOf(await client.request(hl7Message("ADT^A01^ADT_A01", "RL-DOWN")));
      assertEquals([down.code, down.controlId], ["AE", "RL-DOWN"]);
    } finally {
      client.close();
      await gw.stop();
      await rcv.stop().catch(() => {});
    }
  },
});
