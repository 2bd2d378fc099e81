/** What the hl7 backend sends for a request's body, and what it refuses. */
import { assertEquals, assertRejects } from "../../../tests/assert.ts";
import { parseHl7 } from "../../codecs/mod.ts";
import { Body, RequestEnvelope } from "../../envelope.ts";
import type { GatewayError } from "../../errors.ts";
import { outgoingMessage } from "./body.ts";

const MSG = "MSH|^~\\&|A|B|C|D|20260101||ADT^A01^ADT_A01|C42|P|2.5\rPID|1||7\r";

function request(body: string | Uint8Array, type: string): RequestEnvelope {
  const bytes = typeof body === "string" ? new TextEncoder().encode(body) : body;
  return new RequestEnvelope({
    id: "r",
    protocol: "http",
    method: "POST",
    path: "/",
    endpoint: "in",
    body: new Body(bytes, type),
  });
}

Deno.test("hl7 outgoing: ER7 is sent as its bytes (any charset), JSON of the codec as its ER7", async () => {
  const latin1 = new Uint8Array([...new TextEncoder().encode(MSG), 0x50, 0x49, 0x44, 0x7c, 0xe9]);
  const raw = await outgoingMessage(request(latin1, "application/hl7-v2; charset=iso-8859-1"), 1e6);
  assertEquals(raw.bytes, latin1);
  assertEquals(raw.controlId, "C42");
  const json = await outgoingMessage(
    request(JSON.stringify(parseHl7(MSG)), "application/json"),
    1e6,
  );
  assertEquals(new TextDecoder().decode(json.bytes), MSG);
  assertEquals(json.header.messageType, "ADT");
});

Deno.test("hl7 outgoing: a batch is sent whole; its ACK may name any control id", async () => {
  const batch = `FHS|^~\\&|A|B\rBHS|^~\\&|A|B\r${MSG}BTS|1\rFTS|1\r`;
  const out = await outgoingMessage(request(batch, "x-application/hl7-v2+er7"), 1e6);
  assertEquals(out.controlId, "");
  assertEquals(out.header.controlId, "C42");
});

Deno.test("hl7 outgoing: refusals name the problem", async () => {
  const refused = async (body: string, type: string, max = 1e6) =>
    (await assertRejects(() => outgoingMessage(request(body, type), max))) as GatewayError;
  assertEquals((await refused("PID|1", "x-application/hl7-v2+er7")).code, "invalid_hl7");
  assertEquals((await refused('{"a":1}', "application/json")).code, "invalid_hl7");
  assertEquals((await refused("x", "image/png")).status, 415);
  assertEquals((await refused(MSG, "x-application/hl7-v2+er7", 10)).status, 413);
});
