/**
 * Message tracking of HL7 v2 over MLLP: an ADT^A01 sent to an `hl7` endpoint and relayed to an
 * HTTP upstream is recorded with its type, trigger and control id, and the patient id the gateway
 * reads from PID-3; found by `control_id` and `patient_id`, shown as text, and replayed.
 */
import { assertEquals, assertMatch } from "./assert.ts";
import { startTestGateway, startUpstream } from "./harness.ts";
import { ackOf, hl7Message, MllpTestClient } from "./support/mllp.ts";
import { freePort } from "./support/mod.ts";
import { trackingTable, waitForTracked, writeTrackingIdentity } from "./support/tracking.ts";

Deno.test("tracking over MLLP: an ADT recorded with its control id and PID-3, replayed", async () => {
  const upstream = startUpstream(() => new Response("ok"));
  const dir = await Deno.makeTempDir({ prefix: "tracking-hl7-" });
  const identity = await writeTrackingIdentity(dir);
  const port = freePort();
  const gw = await startTestGateway(`
[endpoints.mllp]
service = "hl7"
[endpoints.mllp.options]
bind_addr = "127.0.0.1"
port = ${port}
[backends.up]
service = "http"
[backends.up.options]
base_url = "${upstream.url}"
[pipelines.adt]
endpoints = ["mllp"]
backends = ["up"]
[pipelines.adt.tracking]
content = ["received"]
${trackingTable(dir, identity)}
`);
  const client = await MllpTestClient.connect(port);
  try {
    const message = hl7Message("ADT^A01", "MSG-TRK-1");
    assertEquals(ackOf(await client.request(message)).code, "AA");

    type Msg = { id: string; protocol: string; metadata: Record<string, string> };
    const search = async (q: string) =>
      (await (await gw.mgmtFetch(`/admin/tracking/messages?${q}`)).json()).messages as Msg[];
    const [msg] = await waitForTracked(() => search("control_id=MSG-TRK-1"));
    assertEquals(msg.protocol, "mllp");
    assertEquals(msg.metadata["hl7.message_type"], "ADT");
    assertEquals(msg.metadata["hl7.trigger_event"], "A01");
    assertEquals(msg.metadata.patient_id, "12345");
    assertEquals((await search("patient_id=12345&pipeline=adt")).length, 1);

    const detail = await (await gw.mgmtFetch(`/admin/tracking/messages/${msg.id}?content=1`))
      .json();
    assertEquals(detail.content[0].view.kind, "text");
    assertMatch(detail.content[0].view.text, /^MSH\|\^~\\&\|SENDER/);

    const replay = await (await gw.mgmtFetch(`/admin/tracking/messages/${msg.id}/replay`, {
      method: "POST",
      body: "{}",
    })).json();
    assertEquals(replay.status, 200, JSON.stringify(replay));
    assertEquals(upstream.received.length, 2);
    assertEquals(new TextDecoder().decode(upstream.received[1].body), message);
  } finally {
    client.conn.close();
    await gw.stop();
    await upstream.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
