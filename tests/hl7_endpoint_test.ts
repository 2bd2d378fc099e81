/**
 * The `hl7` endpoint over a raw MLLP socket: each message goes through the pipeline and is
 * acknowledged with its outcome (AA on a 2xx, AE on a 5xx or an unreachable backend, AR on an
 * unparseable message), in enhanced mode with a commit ACK; routing by `match` on the hl7.*
 * metadata; the audit record names the message, never its content; bad framing is answered or
 * closed with a log line while other connections are still served.
 */
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { startTestGateway, type TestGateway } from "./harness.ts";
import { ackOf, hl7Message, MllpTestClient } from "./support/mllp.ts";
import { mllpEndpointToml } from "./support/hl7_gateway.ts";
import { freePort, waitFor } from "./support/mod.ts";

/** An HTTP upstream that records what it receives and answers `status`. */
function upstream(status = 200) {
  const got: { type: string | null; body: string }[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    got.push({ type: req.headers.get("content-type"), body: await req.text() });
    return new Response("ok", { status });
  });
  return { got, server, url: `http://127.0.0.1:${server.addr.port}` };
}

/** Waits for a JSON log line with `msg` (and `fields`). */
async function logLine(gw: TestGateway, msg: string, fields: Record<string, unknown> = {}) {
  let found: Record<string, unknown> | undefined;
  await waitFor(() => {
    found = gw.logs.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) =>
      l.msg === msg &&
      Object.entries(fields).every(([k, v]) => typeof v === "function" ? v(l[k]) : l[k] === v)
    );
    return Promise.resolve(found !== undefined);
  }, { timeoutMs: 10_000, description: `log line ${msg}` });
  return found!;
}

Deno.test({
  name: "hl7 endpoint: AA from an http backend, ADT and ORU routed by match, audited",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const adt = upstream();
    const oru = upstream();
    const port = freePort();
    const gw = await startTestGateway(`${mllpEndpointToml(port)}
[backends.adt]
service = "http"
match = { "hl7.message_type" = "ADT" }
[backends.adt.options]
base_url = "${adt.url}/adt"

[backends.oru]
service = "http"
match = { "hl7.message_type" = "ORU" }
[backends.oru.options]
base_url = "${oru.url}/oru"

[pipelines.hl7]
endpoints = ["mllp"]
backends = ["adt", "oru"]

[audit]
file = "audit/audit.jsonl"
flush_interval_ms = 20
`);
    const client = await MllpTestClient.connect(port);
    try {
      const a = ackOf(await client.request(hl7Message("ADT^A01^ADT_A01", "MSG-1")));
      assertEquals([a.code, a.controlId], ["AA", "MSG-1"]);
      const b = ackOf(await client.request(hl7Message("ORU^R01^ORU_R01", "MSG-2")));
      assertEquals([b.code, b.controlId], ["AA", "MSG-2"]);
      assertEquals(adt.got.length, 1);
      assertEquals(oru.got.length, 1);
      assertEquals(adt.got[0].type, "x-application/hl7-v2+er7");
      assert(adt.got[0].body.includes("MSG-1") && adt.got[0].body.includes("PID|1||12345"));
      assert(oru.got[0].body.includes("MSG-2"));
      // A message the codec refuses is audited too (its status and code, not its content).
      const broken = hl7Message("ADT^A01^ADT_A01", "MSG-3").replace("PID|1", "P!D|1");
      assertEquals(ackOf(await client.request(broken)).code, "AR");

      // The audit trail: type, trigger, control id, facility, ACK code; never the content.
      const file = `${gw.dir}/audit/audit.jsonl`;
      let lines: Record<string, unknown>[] = [];
      await waitFor(async () => {
        const text = await Deno.readTextFile(file).catch(() => "");
        lines = text.split("\n").filter((l) => l).map((l) => JSON.parse(l));
        return lines.length >= 3;
      }, { timeoutMs: 10_000, description: "three audit records" });
      const [first, second, third] = lines;
      assertEquals(
        [first.protocol, first.method, first.hl7_message_type, first.hl7_trigger_event],
        ["mllp", "ADT^A01", "ADT", "A01"],
      );
      assertEquals(
        [first.hl7_control_id, first.hl7_sending_facility, first.hl7_ack_code, first.status],
        ["MSG-1", "NORTH", "AA", 200],
      );
      assertEquals([second.hl7_message_type, second.hl7_control_id], ["ORU", "MSG-2"]);
      assertEquals(
        [third.hl7_control_id, third.hl7_ack_code, third.status, third.error_code],
        ["MSG-3", "AR", 400, "hl7_bad_segment"],
      );
      const raw = await Deno.readTextFile(file);
      assert(!raw.includes("Doe") && !raw.includes("12345"), "no message content in the trail");
    } finally {
      client.close();
      await gw.stop();
      await adt.server.shutdown();
      await oru.server.shutdown();
    }
  },
});

Deno.test({
  name: "hl7 endpoint: AE on a 5xx and on an unreachable backend, AR on a 4xx",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const failing = upstream(503);
    const refusing = upstream(422);
    const port = freePort();
    const gw = await startTestGateway(`${mllpEndpointToml(port)}
[backends.failing]
service = "http"
match = { "hl7.trigger_event" = "A01" }
[backends.failing.options]
base_url = "${failing.url}"

[backends.refusing]
service = "http"
match = { "hl7.trigger_event" = "A04" }
[backends.refusing.options]
base_url = "${refusing.url}"

[backends.gone]
service = "http"
timeout_secs = 5
match = { "hl7.trigger_event" = "A08" }
[backends.gone.options]
base_url = "http://127.0.0.1:${freePort()}"

[pipelines.hl7]
endpoints = ["mllp"]
backends = ["failing", "refusing", "gone"]
`);
    const client = await MllpTestClient.connect(port);
    try {
      const e = ackOf(await client.request(hl7Message("ADT^A01", "E-1")));
      assertEquals([e.code, e.controlId], ["AE", "E-1"]);
      assertMatch(e.err, /503/);
      const r = ackOf(await client.request(hl7Message("ADT^A04", "R-1")));
      assertEquals([r.code, r.controlId], ["AR", "R-1"]);
      const g = ackOf(await client.request(hl7Message("ADT^A08", "G-1")));
      assertEquals([g.code, g.controlId], ["AE", "G-1"]);
      assert(g.err !== "", "ERR names the problem");
      // Enhanced mode: MSH-15 = AL, MSH-16 = NE -> a commit ACK only (CE on the failure).
      const c = ackOf(
        await client.request(hl7Message("ADT^A01", "C-1", { acceptAck: "AL", appAck: "NE" })),
      );
      assertEquals([c.code, c.controlId], ["CE", "C-1"]);
    } finally {
      client.close();
      await gw.stop();
      await failing.server.shutdown();
      await refusing.server.shutdown();
    }
  },
});

Deno.test({
  name: "hl7 endpoint: enhanced mode with an echo backend: CA, then AA when MSH-16 asks",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const port = freePort();
    const gw = await startTestGateway(`${mllpEndpointToml(port)}
[backends.echo]
service = "echo"
[pipelines.hl7]
endpoints = ["mllp"]
backends = ["echo"]
`);
    const client = await MllpTestClient.connect(port);
    try {
      const only = ackOf(
        await client.request(hl7Message("ADT^A01", "N-1", { acceptAck: "AL", appAck: "NE" })),
      );
      assertEquals([only.code, only.controlId], ["CA", "N-1"]);
      await client.send(hl7Message("ADT^A01", "N-2", { acceptAck: "AL", appAck: "AL" }));
      assertEquals(ackOf(await client.next()).code, "CA");
      const app = ackOf(await client.next());
      assertEquals([app.code, app.controlId], ["AA", "N-2"]);
      // A sender that shuts its side after its message still gets the ACK, then the close.
      const halfClosed = await MllpTestClient.connect(port);
      await halfClosed.send(hl7Message("ADT^A01", "HC-1"));
      await halfClosed.conn.closeWrite();
      assertEquals(ackOf(await halfClosed.next()).controlId, "HC-1");
      assert(await halfClosed.closedWithin(5000), "closed after the ACK");
      halfClosed.close();
      // Original mode on the same connection, in order.
      await client.send(hl7Message("ADT^A01", "O-1"));
      await client.send(hl7Message("ADT^A01", "O-2"));
      assertEquals(ackOf(await client.next()).controlId, "O-1");
      assertEquals(ackOf(await client.next()).controlId, "O-2");
    } finally {
      client.close();
      await gw.stop();
    }
  },
});

Deno.test({
  name: "hl7 endpoint: bad input gets an AR or a close with a log line; others are still served",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const port = freePort();
    const gw = await startTestGateway(`${
      mllpEndpointToml(port, {
        options: `max_message_bytes = 65536
idle_timeout_secs = 1
allowed_sending_facilities = ["NORTH"]`,
      })
    }
[backends.echo]
service = "echo"
[pipelines.hl7]
endpoints = ["mllp"]
backends = ["echo"]
`);
    const served = async (id: string) => {
      const c = await MllpTestClient.connect(port);
      try {
        const a = ackOf(await c.request(hl7Message("ADT^A01", id)));
        assertEquals([a.code, a.controlId], ["AA", id], `another connection is served (${id})`);
      } finally {
        c.close();
      }
    };
    // A sender that never reads its ACKs, open the whole time.
    const deaf = await MllpTestClient.connect(port);
    try {
      await deaf.send(hl7Message("ADT^A01", "DEAF-1"));

      // Missing MSH: AR with an empty MSA-2, the connection kept.
      const c1 = await MllpTestClient.connect(port);
      const noMsh = ackOf(await c1.request("PID|1||123\rPV1|1|I\r"));
      assertEquals([noMsh.code, noMsh.controlId], ["AR", ""]);
      assertMatch(noMsh.err, /MSH/);
      await logLine(gw, "HL7 message unreadable", { code: "no_msh" });
      // Wrong delimiters (MSH-2 missing): AR.
      const bad = ackOf(await c1.request("MSH|\rPID|1\r"));
      assertEquals(bad.code, "AR");
      // A facility not allowed: AR naming MSH-4.
      const fac = ackOf(await c1.request(hl7Message("ADT^A01", "F-1", { facility: "SOUTH" })));
      assertEquals([fac.code, fac.controlId], ["AR", "F-1"]);
      assertMatch(fac.err, /SOUTH/);
      const ok = ackOf(await c1.request(hl7Message("ADT^A01", "OK-1")));
      assertEquals(ok.code, "AA");
      c1.close();
      await served("A-1");

      // Binary garbage: closed with a log line.
      const c2 = await MllpTestClient.connect(port);
      await c2.raw(new Uint8Array([0xff, 0x00, 0x13, 0x37, 0x0b]));
      assert(await c2.closedWithin(5000), "garbage closes the connection");
      await logLine(gw, "HL7 connection closed", { reason: "framing" });
      c2.close();
      await served("A-2");

      // A frame without <FS> (truncated, then silence): closed at the idle timeout, logged.
      const c3 = await MllpTestClient.connect(port);
      await c3.raw("\x0bMSH|^~\\&|SENDER|NORTH|GW|HOSP|2024||ADT^A01|T-1|P|2.5\rPID|1");
      assert(await c3.closedWithin(5000), "an unfinished frame is closed at the idle timeout");
      // The log names the dropped bytes of the unfinished frame.
      await logLine(gw, "HL7 connection closed", {
        reason: "idle_timeout",
        pending_bytes: (n: unknown) => typeof n === "number" && n > 0,
      });
      c3.close();
      // A truncated frame followed by a new one: garbage, closed.
      const c4 = await MllpTestClient.connect(port);
      await c4.raw("\x0bMSH|^~\\&|A|B");
      await c4.send(hl7Message("ADT^A01", "X-1"));
      assert(await c4.closedWithin(5000));
      c4.close();
      await served("A-3");

      // 10 MB: over max_message_bytes, an AR naming the limit, then closed with a log line.
      const c5 = await MllpTestClient.connect(port);
      const big = hl7Message("ORU^R01", "BIG-1") + "OBX|1|ED|PDF||" + "A".repeat(10 * 1024 * 1024) +
        "\r";
      const sending = c5.send(big).catch(() => {});
      const tooBig = ackOf(await c5.next());
      assertEquals([tooBig.code, tooBig.controlId], ["AR", "BIG-1"]);
      assertMatch(tooBig.err, /65536/);
      assert(await c5.closedWithin(5000));
      await sending;
      await logLine(gw, "HL7 message too large", { control_id: "BIG-1" });
      c5.close();
      await served("A-4");

      // The deaf sender is closed at the idle timeout.
      assert(await deaf.closedWithin(5000), "the deaf sender is closed");
    } finally {
      deaf.close();
      await gw.stop();
    }
  },
});

Deno.test({
  name:
    "hl7 endpoint: after a reload, the next message of an open connection takes the new pipeline",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const failing = upstream(503);
    const port = freePort();
    const echo = `${mllpEndpointToml(port)}
[backends.main]
service = "echo"
[pipelines.hl7]
endpoints = ["mllp"]
backends = ["main"]
`;
    const gw = await startTestGateway(echo);
    const client = await MllpTestClient.connect(port);
    try {
      assertEquals(ackOf(await client.request(hl7Message("ADT^A01", "RL-1"))).code, "AA");
      await gw.writeConfig(echo.replace(
        `[backends.main]\nservice = "echo"`,
        `[backends.main]\nservice = "http"\n[backends.main.options]\nbase_url = "${failing.url}"`,
      ));
      await logLine(gw, "configuration reloaded");
      // The same connection, opened on the old generation: served by the new one.
      const a = ackOf(await client.request(hl7Message("ADT^A01", "RL-2")));
      assertEquals([a.code, a.controlId], ["AE", "RL-2"]);
      assertEquals(failing.got.length, 1);
    } finally {
      client.close();
      await gw.stop();
      await failing.server.shutdown();
    }
  },
});

Deno.test({
  name: "hl7 endpoint: a stopping gateway closes idle MLLP connections at once (no drain timeout)",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const port = freePort();
    const gw = await startTestGateway(`${mllpEndpointToml(port)}
[backends.main]
service = "echo"
[pipelines.hl7]
endpoints = ["mllp"]
backends = ["main"]
`);
    const idle = await MllpTestClient.connect(port);
    try {
      assertEquals(ackOf(await idle.request(hl7Message("ADT^A01", "ST-1"))).code, "AA");
      await gw.stop();
      assert(await idle.closedWithin(2000), "the idle sender is closed by the stop");
      assert(
        !gw.logs.some((l) => l.includes("drain timed out")),
        "the drain did not wait for the idle connection",
      );
    } finally {
      idle.close();
    }
  },
});
