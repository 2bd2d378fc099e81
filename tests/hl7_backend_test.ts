/**
 * The `hl7` backend against real MLLP receivers from npm: `@medplum/hl7`'s Hl7Server (ACK codes,
 * ERR text, closing mid-message, silence, connection counts) and `node-hl7-server`, driven
 * through a gateway whose `http` endpoint takes ER7 posted as `x-application/hl7-v2+er7`.
 */
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { startTestGateway, type TestGateway } from "./harness.ts";
import { adtA01, type Hl7Receiver, startHl7Receiver } from "./support/hl7_receiver.ts";
import { freePort } from "./support/ports.ts";
import { waitFor } from "./support/wait.ts";
import { Server as NodeHl7Server } from "node-hl7-server";
import { Hl7Client } from "@medplum/hl7";
import { Hl7Message } from "@medplum/core";
import { parseHl7 } from "../gateway/codecs/hl7/mod.ts";

const ER7 = "x-application/hl7-v2+er7";

function config(port: number, options = ""): string {
  return `
[endpoints.in]
service = "http"
[endpoints.in.options]
path_prefix = "/hl7"

[backends.rcv]
service = "hl7"
timeout_secs = 20
[backends.rcv.options]
host = "127.0.0.1"
port = ${port}
${options.includes("ack_timeout_secs") ? "" : "ack_timeout_secs = 5"}
${options}

[pipelines.p]
endpoints = ["in"]
backends = ["rcv"]
`;
}

async function post(gw: TestGateway, body: string, type = ER7, id?: string) {
  const headers: Record<string, string> = { "content-type": type };
  if (id) headers["x-request-id"] = id;
  const res = await fetch(`${gw.url}/hl7/adt`, { method: "POST", headers, body });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text };
}

/** A gateway (one isolate, so one pool) in front of a receiver; both stopped after `fn`. */
async function withPair(
  fn: (gw: TestGateway, rcv: Hl7Receiver) => Promise<void>,
  options = "",
): Promise<void> {
  const rcv = await startHl7Receiver();
  const gw = await startTestGateway(config(rcv.port, options), { workers: 1 });
  try {
    await fn(gw, rcv);
  } finally {
    await gw.stop();
    await rcv.stop();
  }
}

Deno.test("hl7 backend: an AA from @medplum/hl7's Hl7Server is a 200 with the ACK as body", async () => {
  await withPair(async (gw, rcv) => {
    const res = await post(gw, adtA01("MSG0001"));
    assertEquals(res.status, 200);
    assertEquals(res.headers.get("content-type"), ER7);
    assertEquals(res.headers.get("x-hl7-ack-code"), "AA");
    assertEquals(res.headers.get("x-hl7-control-id"), "MSG0001");
    assertMatch(res.text, /^MSH\|\^~\\&\|RECEIVER\|LAB\|SENDER\|HOSP\|/);
    assertMatch(res.text, /\rMSA\|AA\|MSG0001/);
    // The receiver got the message byte for byte.
    assertEquals(rcv.messages, [adtA01("MSG0001")]);
  });
});

Deno.test("hl7 backend: AE and AR are 502s naming the ERR text, with the ACK in details", async () => {
  await withPair(async (gw, rcv) => {
    rcv.reply = (_m, i) =>
      i === 0
        ? { ack: "AE", err: "Unknown patient 123456" }
        : { ack: "AR", err: "ADT not accepted" };
    const ae = await post(gw, adtA01("MSG0001"));
    assertEquals(ae.status, 502);
    const aeBody = JSON.parse(ae.text).error;
    assertEquals(aeBody.code, "hl7_ack_error");
    assertMatch(aeBody.message, /MSG0001 \(AE\): Unknown patient 123456/);
    const ar = await post(gw, adtA01("MSG0002"));
    assertEquals(ar.status, 502);
    const arBody = JSON.parse(ar.text).error;
    assertEquals(arBody.code, "hl7_ack_reject");
    assertMatch(arBody.message, /ADT not accepted/);
    // An error ACK leaves the connection usable: both went over one.
    assertEquals(rcv.connections, 1);
  });
});

Deno.test("hl7 backend: connections are pooled and reused, at most pool_size at once", async () => {
  await withPair(async (gw, rcv) => {
    for (let i = 0; i < 5; i++) assertEquals((await post(gw, adtA01(`SEQ${i}`))).status, 200);
    assertEquals(rcv.connections, 1);
    // Twelve at once over a pool of 3: never more than three connections, every ACK its own.
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) => post(gw, adtA01(`PAR${i}`))),
    );
    results.forEach((r, i) => {
      assertEquals(r.status, 200);
      assertEquals(r.headers.get("x-hl7-control-id"), `PAR${i}`);
    });
    assert(rcv.connections <= 3, `${rcv.connections} connections`);
    assertEquals(rcv.messages.length, 17);
  }, "pool_size = 3");
});

Deno.test("hl7 backend: pool_size 1 sends concurrent requests one at a time over one connection", async () => {
  await withPair(async (gw, rcv) => {
    const ids = Array.from({ length: 10 }, (_, i) => `ORD${i}`);
    const results = await Promise.all(ids.map((id) => post(gw, adtA01(id))));
    assert(results.every((r) => r.status === 200));
    assertEquals(rcv.connections, 1);
    assertEquals(rcv.controlIds.length, 10);
  });
});

Deno.test("hl7 backend: a receiver closing mid-message fails that message (not resent); the next one reconnects", async () => {
  await withPair(async (gw, rcv) => {
    rcv.reply = (_m, i) => i === 1 ? { close: true } : { ack: "AA" };
    assertEquals((await post(gw, adtA01("M1"))).status, 200);
    const cut = await post(gw, adtA01("M2"));
    assertEquals(cut.status, 502);
    const err = JSON.parse(cut.text).error;
    assertEquals(err.code, "hl7_no_ack");
    assertMatch(err.message, /not sent again/);
    const next = await post(gw, adtA01("M3"));
    assertEquals(next.status, 200);
    assertEquals(next.headers.get("x-hl7-control-id"), "M3");
    // M2 arrived once: the backend did not send it again.
    assertEquals(rcv.controlIds, ["M1", "M2", "M3"]);
    assertEquals(rcv.connections, 2);
  });
});

Deno.test("hl7 backend: an idle pooled connection the receiver dropped is replaced without a failure", async () => {
  await withPair(async (gw, rcv) => {
    assertEquals((await post(gw, adtA01("A1"))).status, 200);
    // The receiver goes away and comes back on the same port: the pooled connection is dead.
    await rcv.stop();
    // The gateway has seen the close (a close racing the next write is the not-resent case of
    // the test above).
    await waitFor(
      () => Promise.resolve(gw.logs.some((l) => l.includes("closed by the receiver"))),
      {
        timeoutMs: 10_000,
        description: "the gateway seeing the receiver's close",
      },
    );
    const back = await startHl7Receiver(rcv.port);
    try {
      const res = await post(gw, adtA01("A2"));
      assertEquals(res.status, 200);
      assertEquals(back.controlIds, ["A2"]);
    } finally {
      await back.stop();
    }
  });
});

Deno.test("hl7 backend: no ACK within ack_timeout_secs is a 504; the connection is replaced", async () => {
  await withPair(async (gw, rcv) => {
    rcv.reply = (_m, i) => i === 0 ? { silent: true } : { ack: "AA" };
    const res = await post(gw, adtA01("SLOW1"));
    assertEquals(res.status, 504);
    const err = JSON.parse(res.text).error;
    assertEquals(err.code, "backend_timeout");
    assertMatch(err.message, /no ACK .* within 1 s .*SLOW1/);
    assertEquals((await post(gw, adtA01("FAST2"))).status, 200);
    assertEquals(rcv.connections, 2);
  }, "ack_timeout_secs = 1");
});

Deno.test("hl7 backend: a receiver that is down is a 502 with the request id", async () => {
  const port = freePort();
  const gw = await startTestGateway(config(port), { workers: 1 });
  try {
    const res = await post(gw, adtA01("DOWN1"), ER7, "req-hl7-down");
    assertEquals(res.status, 502);
    assertEquals(res.headers.get("x-request-id"), "req-hl7-down");
    const err = JSON.parse(res.text).error;
    assertEquals(err.code, "backend_unavailable");
    assertEquals(err.request_id, "req-hl7-down");
    assertMatch(err.message, new RegExp(`connection refused by 127\\.0\\.0\\.1:${port}`));
  } finally {
    await gw.stop();
  }
});

Deno.test("hl7 backend: failover receivers take over while host is unreachable; host is preferred again after cooldown_secs", async () => {
  const primaryPort = freePort();
  const backup = await startHl7Receiver();
  const gw = await startTestGateway(
    config(primaryPort, `failover = ["127.0.0.1:${backup.port}"]`).replace(
      "timeout_secs = 20",
      "timeout_secs = 20\ncooldown_secs = 0.2",
    ),
    { workers: 1 },
  );
  let primary: Hl7Receiver | undefined;
  try {
    // host refuses: the message goes to the backup, and so does the next (host in cool-down).
    for (const id of ["F1", "F2"]) {
      const res = await post(gw, adtA01(id));
      assertEquals(res.status, 200, res.text);
    }
    assertEquals(backup.controlIds, ["F1", "F2"]);
    assert(gw.logs.some((l) => l.includes("receiver unreachable, trying the next")));
    // host comes back: once its cool-down is over, messages go to it again.
    primary = await startHl7Receiver(primaryPort);
    let n = 0;
    await waitFor(async () => {
      assertEquals((await post(gw, adtA01(`F${3 + n++}`))).status, 200);
      return primary!.messages.length > 0;
    }, { timeoutMs: 10_000, description: "a message at the primary receiver" });
    assertEquals(backup.controlIds.length + primary.controlIds.length, 2 + n);
  } finally {
    await gw.stop();
    await backup.stop();
    await primary?.stop();
  }
});

Deno.test("hl7 backend: a body that is no HL7 message is a 4xx naming the problem", async () => {
  await withPair(async (gw, rcv) => {
    const png = await post(gw, "\x89PNG", "image/png");
    assertEquals(png.status, 415);
    assertMatch(JSON.parse(png.text).error.message, /image\/png/);
    const noMsh = await post(gw, "PID|1||123", ER7);
    assertEquals(noMsh.status, 400);
    assertEquals(JSON.parse(noMsh.text).error.code, "invalid_hl7");
    const json = await post(gw, JSON.stringify({ hello: "world" }), "application/json");
    assertEquals(json.status, 400);
    assertEquals(JSON.parse(json.text).error.code, "invalid_hl7");
    assertEquals(rcv.messages.length, 0);
  });
});

Deno.test("hl7 backend: a body in the HL7 codec's JSON is sent as the ER7 it stands for", async () => {
  await withPair(async (gw, rcv) => {
    const json = parseHl7(adtA01("JSON1"));
    const res = await post(gw, JSON.stringify(json), "application/json");
    assertEquals(res.status, 200, res.text);
    assertEquals(res.headers.get("x-hl7-control-id"), "JSON1");
    assertEquals(rcv.messages, [adtA01("JSON1")]);
  });
});

Deno.test("hl7 backend: a transform that changes the message: the receiver gets the changed ER7, all else byte for byte", async () => {
  const rcv = await startHl7Receiver();
  const spec = [{
    operation: "modify-overwrite-beta",
    spec: { segments: { MSH: { "[0]": { "5": { "[0]": { "1": "NEWAPP" } } } } } },
  }];
  const toml = `transforms_path = "transforms"\n` +
    config(rcv.port).replace('backends = ["rcv"]', 'middleware = ["route"]\nbackends = ["rcv"]') + `
[middleware.route]
type = "transform"
[middleware.route.options]
spec_path = "route.json"
`;
  const gw = await startTestGateway(toml, {
    workers: 1,
    files: { "transforms/route.json": JSON.stringify(spec) },
  });
  try {
    const res = await post(gw, adtA01("T1"));
    assertEquals(res.status, 200, res.text);
    assertEquals(rcv.messages, [adtA01("T1").replace("|RECEIVER|LAB|", "|NEWAPP|LAB|")]);
  } finally {
    await gw.stop();
    await rcv.stop();
  }
});

Deno.test("hl7 backend: node-hl7-server as the receiver, with one message per connection and with reuse", async () => {
  const port = freePort();
  const server = new NodeHl7Server({ bindAddress: "127.0.0.1" });
  const seen: string[] = [];
  let connections = 0;
  const inbound = server.createInbound({ port }, async (req, res) => {
    seen.push(req.getMessage().get("MSH.10").toString());
    await res.sendResponse("AA");
  });
  inbound.on("client.connect", () => connections++);
  await new Promise<void>((resolve) => inbound.on("listen", () => resolve()));
  const gw = await startTestGateway(config(port, "messages_per_connection = 1"), { workers: 1 });
  try {
    for (const id of ["N1", "N2", "N3"]) {
      const res = await post(gw, adtA01(id));
      assertEquals(res.status, 200);
      assertEquals(res.headers.get("x-hl7-control-id"), id);
    }
    assertEquals(seen, ["N1", "N2", "N3"]);
    assertEquals(connections, 3);
  } finally {
    await gw.stop();
  }
  // With reuse, node-hl7-server 2.5.0 handles the connection's earlier messages again and
  // answers them too: those late ACKs are skipped and each request gets its own.
  const reuse = await startTestGateway(config(port), { workers: 1 });
  try {
    for (const id of ["R1", "R2", "R3"]) {
      const res = await post(reuse, adtA01(id));
      assertEquals(res.status, 200);
      assertEquals(res.headers.get("x-hl7-control-id"), id);
    }
    assertEquals(connections, 4);
  } finally {
    await reuse.stop();
    await inbound.close();
  }
});

Deno.test("hl7 backend behind an hl7 endpoint: @medplum/hl7 Hl7Client to Hl7Server through the gateway, ACKs passed on", async () => {
  const rcv = await startHl7Receiver();
  const mllpPort = freePort();
  const gw = await startTestGateway(
    config(rcv.port).replace(
      'endpoints = ["in"]',
      'endpoints = ["in", "mllp_in"]',
    ) + `
[endpoints.mllp_in]
service = "hl7"
[endpoints.mllp_in.options]
bind_addr = "127.0.0.1"
port = ${mllpPort}
`,
    { workers: 1 },
  );
  const client = new Hl7Client({ host: "127.0.0.1", port: mllpPort });
  try {
    rcv.reply = (_m, i) => i === 1 ? { ack: "AE", err: "Unknown ward" } : { ack: "AA" };
    const ok = await client.sendAndWait(Hl7Message.parse(adtA01("E2E1")), { timeoutMs: 10_000 });
    assertEquals(ok.getSegment("MSA")?.getField(1)?.toString(), "AA");
    assertEquals(ok.getSegment("MSA")?.getField(2)?.toString(), "E2E1");
    // The receiver's own ACK, passed on as it was: sent by RECEIVER^LAB.
    assertEquals(ok.getSegment("MSH")?.getField(3)?.toString(), "RECEIVER");
    const ae = await client.sendAndWait(Hl7Message.parse(adtA01("E2E2")), { timeoutMs: 10_000 });
    assertEquals(ae.getSegment("MSA")?.getField(1)?.toString(), "AE");
    assertEquals(ae.getSegment("MSA")?.getField(2)?.toString(), "E2E2");
    assertMatch(ae.toString(), /Unknown ward/);
    assertEquals(rcv.controlIds, ["E2E1", "E2E2"]);
  } finally {
    await client.close();
    await gw.stop();
    await rcv.stop();
  }
});
