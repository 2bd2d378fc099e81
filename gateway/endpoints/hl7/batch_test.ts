import { assertEquals } from "../../../tests/assert.ts";
import { type Hl7Batch, parseHl7 } from "../../codecs/hl7/mod.ts";
import { batchMessages, batchSize, buildBatchAck } from "./batch.ts";

const msh = (id: string) =>
  `MSH|^~\\&|APP|FAC|GW|HOSP|20240102||ADT^A01|${id}|P|2.5.1\rPID|1||${id}\r`;
const ack = (code: string, id: string) =>
  `MSH|^~\\&|GW|HOSP|APP|FAC|20240102||ACK|x|P|2.5.1\rMSA|${code}|${id}`;

Deno.test("batch: a file of two batches gives two response batches, each referencing its own", () => {
  const text = "FHS|^~\\&|FAPP|FFAC|GW|HOSP|||||F-1\r" +
    "BHS|^~\\&|BAPP|BFAC|GW|HOSP|||||B-1\r" + msh("1") + msh("2") + "BTS|2\r" +
    "BHS|^~\\&|BAPP2|BFAC2|GW|HOSP|||||B-2\r" + msh("3") + "BTS|1\rFTS|2\r";
  const batch = parseHl7(text) as Hl7Batch;
  assertEquals(batchSize(batch), 3);
  const messages = batchMessages(batch);
  assertEquals(messages.map((m) => m.group), [0, 0, 1]);
  assertEquals(messages[2].text, msh("3"), "each message as its own ER7");
  const out = buildBatchAck(text, batch, [
    { group: 0, acks: [ack("AA", "1")] },
    { group: 0, acks: [ack("AE", "2")] },
    { group: 1, acks: [ack("AA", "3")] },
  ]).split("\r").filter((s) => s !== "");
  const fields = (name: string) => out.filter((s) => s.startsWith(name)).map((s) => s.split("|"));
  assertEquals(out.map((s) => s.slice(0, 3)), [
    "FHS",
    "BHS",
    "MSH",
    "MSA",
    "MSH",
    "MSA",
    "BTS",
    "BHS",
    "MSH",
    "MSA",
    "BTS",
    "FTS",
  ]);
  assertEquals(fields("BHS").map((f) => [f[2], f[3], f[4], f[5], f[11]]), [
    ["GW", "HOSP", "BAPP", "BFAC", "B-1"],
    ["GW", "HOSP", "BAPP2", "BFAC2", "B-2"],
  ]);
  assertEquals(fields("FHS")[0][11], "F-1");
  assertEquals(out.filter((s) => /^(BTS|FTS)/.test(s)), ["BTS|2", "BTS|1", "FTS|2"]);
});

Deno.test("batch: several MSH without batch segments get one BHS/BTS named from the first MSH", () => {
  const text = msh("1") + msh("2");
  const batch = parseHl7(text) as Hl7Batch;
  const out = buildBatchAck(text, batch, [
    { group: 0, acks: [ack("AA", "1")] },
    { group: 0, acks: [ack("AA", "2")] },
  ]).split("\r").filter((s) => s !== "");
  const bhs = out[0].split("|");
  assertEquals([bhs[0], bhs[2], bhs[3], bhs[4], bhs[5], bhs.length], [
    "BHS",
    "GW",
    "HOSP",
    "APP",
    "FAC",
    11,
  ]);
  assertEquals(out.at(-1), "BTS|2");
});
