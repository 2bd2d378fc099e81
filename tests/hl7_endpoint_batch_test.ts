/**
 * HL7 batches (FHS/BHS … BTS/FTS) sent as one MLLP frame to the `hl7` endpoint from a raw socket:
 * each message goes through the pipeline in order as its own envelope (with its own audit record),
 * and the sender gets one response batch with one ACK per message (v2.5 2.10.3); a batch over
 * `max_batch_messages`, or one that cannot be read, gets an `AR`.
 */
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { ackOf, hl7Message, MllpTestClient } from "./support/mllp.ts";
import { startMllpGateway } from "./support/hl7_gateway.ts";
import { waitFor } from "./support/mod.ts";

const FHS = "FHS|^~\\&|FILEAPP|NORTH|GATEWAY|HOSP|20240102030405||||FILE-7";
const BHS = "BHS|^~\\&|BATCHAPP|NORTH|GATEWAY|HOSP|20240102030405||||BATCH-9";

/** A batch text of `ids` (ADT^A01 messages) with the given header segments. */
function batchOf(ids: string[], opts: { fhs?: boolean; bhs?: boolean } = {}): string {
  const lines: string[] = [];
  if (opts.fhs) lines.push(FHS);
  if (opts.bhs) lines.push(BHS);
  let text = lines.map((l) => l + "\r").join("");
  for (const id of ids) text += hl7Message("ADT^A01^ADT_A01", id);
  if (opts.bhs) text += `BTS|${ids.length}\r`;
  if (opts.fhs) text += "FTS|1\r";
  return text;
}

/** A response batch read: its segments by name, and its ACKs' MSA-1 and MSA-2 in order. */
function readBatchAck(text: string) {
  const segments = text.split("\r").filter((s) => s !== "");
  const named = (name: string) => segments.filter((s) => s.startsWith(name + "|"));
  const msas = named("MSA").map((s) => s.split("|").slice(1, 3));
  return { segments, named, msas, names: segments.map((s) => s.slice(0, 3)) };
}

Deno.test({
  name: "hl7 endpoint batch: 3 messages through an http backend, one AE among AAs, audited",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const got: string[] = [];
    const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
      const body = await req.text();
      got.push(body);
      return new Response("ok", { status: body.includes("|B-2|") ? 503 : 200 });
    });
    const { gw, port } = await startMllpGateway(`
[backends.ehr]
service = "http"
[backends.ehr.options]
base_url = "http://127.0.0.1:${server.addr.port}"

[pipelines.hl7]
endpoints = ["mllp"]
backends = ["ehr"]

[audit]
file = "audit/audit.jsonl"
flush_interval_ms = 20
`);
    const client = await MllpTestClient.connect(port);
    try {
      const ack = readBatchAck(
        await client.request(batchOf(["B-1", "B-2", "B-3"], { fhs: true, bhs: true })),
      );
      // deno-fmt-ignore
      assertEquals(ack.names, [
        "FHS", "BHS", "MSH", "MSA", "MSH", "MSA", "ERR", "MSH", "MSA", "BTS", "FTS",
      ]);
      assertEquals(ack.msas, [["AA", "B-1"], ["AE", "B-2"], ["AA", "B-3"]]);
      assertEquals(ack.named("BTS"), ["BTS|3"]);
      assertEquals(ack.named("FTS"), ["FTS|1"]);
      const fhs = ack.named("FHS")[0].split("|");
      const bhs = ack.named("BHS")[0].split("|");
      // Sending and receiving swapped; field n is index n-1 (FHS-1 is the separator itself).
      assertEquals(fhs.slice(2, 6), ["GATEWAY", "HOSP", "FILEAPP", "NORTH"]);
      assertEquals(bhs.slice(2, 6), ["GATEWAY", "HOSP", "BATCHAPP", "NORTH"]);
      assertEquals([fhs[11], bhs[11]], ["FILE-7", "BATCH-9"], "FHS-12/BHS-12 reference ids");
      assert(bhs[10] !== "" && bhs[10] !== "BATCH-9", "BHS-11: the response's own control id");
      // The AE names the failure; the AAs carry no ERR.
      assertEquals(ack.named("ERR").length, 1);
      assertMatch(ack.named("ERR")[0], /503/);
      // Each message reached the backend alone, in order.
      assertEquals(got.length, 3);
      assertEquals(got.map((b) => b.split("\r")[0].split("|")[9]), ["B-1", "B-2", "B-3"]);
      assert(got.every((b) => b.startsWith("MSH|") && !b.includes("BHS") && !b.includes("FHS")));

      // The audit: one record per message, never the batch as one.
      const file = `${gw.dir}/audit/audit.jsonl`;
      let lines: Record<string, unknown>[] = [];
      await waitFor(async () => {
        const text = await Deno.readTextFile(file).catch(() => "");
        lines = text.split("\n").filter((l) => l).map((l) => JSON.parse(l));
        return lines.length >= 3;
      }, { timeoutMs: 10_000, description: "three audit records" });
      assertEquals(
        lines.map((l) => [l.hl7_control_id, l.hl7_ack_code, l.status]),
        [["B-1", "AA", 200], ["B-2", "AE", 502], ["B-3", "AA", 200]],
      );
      assert(!(await Deno.readTextFile(file)).includes("Doe"), "no content in the trail");
    } finally {
      client.close();
      await gw.stop();
      await server.shutdown();
    }
  },
});

Deno.test({
  name: "hl7 endpoint batch: FHS without BHS, BHS without FHS, over max_batch_messages, unreadable",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const { gw, port } = await startMllpGateway(
      `
[backends.echo]
service = "echo"
[pipelines.hl7]
endpoints = ["mllp"]
backends = ["echo"]
`,
      { options: "max_batch_messages = 3" },
    );
    const client = await MllpTestClient.connect(port);
    try {
      // FHS, no BHS: the response has FHS, one BHS/BTS (parties from the FHS), FTS.
      const fileOnly = readBatchAck(await client.request(batchOf(["F-1", "F-2"], { fhs: true })));
      assertEquals(fileOnly.msas, [["AA", "F-1"], ["AA", "F-2"]]);
      assertEquals(fileOnly.names[0], "FHS");
      assertEquals(fileOnly.names[1], "BHS");
      assertEquals(fileOnly.names.slice(-2), ["BTS", "FTS"]);
      assertEquals(fileOnly.named("FHS")[0].split("|")[11], "FILE-7");
      assertEquals(fileOnly.named("BHS")[0].split("|").slice(2, 6), [
        "GATEWAY",
        "HOSP",
        "FILEAPP",
        "NORTH",
      ]);
      assertEquals(fileOnly.named("BTS"), ["BTS|2"]);

      // BHS, no FHS: BHS … BTS, no file segments.
      const batchOnly = readBatchAck(
        await client.request(batchOf(["C-1", "C-2", "C-3"], { bhs: true })),
      );
      assertEquals(batchOnly.msas, [["AA", "C-1"], ["AA", "C-2"], ["AA", "C-3"]]);
      assertEquals([batchOnly.names[0], batchOnly.names.at(-1)], ["BHS", "BTS"]);
      assertEquals(batchOnly.named("FHS").length + batchOnly.named("FTS").length, 0);
      assertEquals(batchOnly.named("BHS")[0].split("|")[11], "BATCH-9");
      assertEquals(batchOnly.named("BTS"), ["BTS|3"]);

      // Over max_batch_messages: one AR naming the limit; none of its messages is processed.
      const over = ackOf(
        await client.request(batchOf(["X-1", "X-2", "X-3", "X-4"], { fhs: true, bhs: true })),
      );
      assertEquals(over.code, "AR");
      assertMatch(over.err, /max_batch_messages of 3/);

      // A batch the codec cannot read (a broken segment in its second message): AR like a message.
      const broken = batchOf(["Y-1", "Y-2"], { bhs: true }).replace(
        /(MSH[^\r]*Y-2[^\r]*\r)EVN/,
        "$1E!N",
      );
      const bad = ackOf(await client.request(broken));
      assertEquals(bad.code, "AR");
      assertMatch(bad.err, /E!N|segment/);

      // The connection still serves single messages the usual way.
      const single = ackOf(await client.request(hl7Message("ADT^A01", "S-1")));
      assertEquals([single.code, single.controlId], ["AA", "S-1"]);
    } finally {
      client.close();
      await gw.stop();
    }
  },
});
