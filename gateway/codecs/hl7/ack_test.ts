import { deepEqual, equal, match, throws } from "node:assert/strict";
import { buildAck, Hl7Error, readAck, readHl7Header } from "./mod.ts";

const NOW = new Date("2024-01-02T03:04:05Z");

const message = (version: string, delimiters = "|^~\\&") => {
  const [f, c] = [delimiters[0], delimiters[1]];
  return [
    "MSH",
    delimiters.slice(1),
    "SENDER",
    "NORTH",
    "RECEIVER",
    "SOUTH",
    "20240102",
    "",
    `ADT${c}A01${c}ADT_A01`,
    "CTRL-1",
    "P",
    version,
  ].join(f) + "\rPID|1\r";
};

Deno.test("buildAck: swaps sender and receiver, keeps version, processing id and control id", () => {
  const header = readHl7Header(message("2.5.1"));
  const ack = buildAck(header, { code: "AA", controlId: "ACK-1", now: NOW });
  equal(
    ack,
    "MSH|^~\\&|RECEIVER|SOUTH|SENDER|NORTH|20240102030405+0000||ACK^A01^ACK|ACK-1|P|2.5.1\r" +
      "MSA|AA|CTRL-1",
  );
  const back = readAck(ack);
  equal(back.code, "AA");
  equal(back.controlId, "CTRL-1");
  deepEqual(back.errors, []);
  equal(back.header.messageType, "ACK");
  equal(back.header.sendingApplication, "RECEIVER");
});

Deno.test("buildAck: v2.5+ ERR layout (ERR-2/3/4/8) read back by readAck", () => {
  const header = readHl7Header(message("2.5"));
  const ack = buildAck(header, {
    code: "AE",
    text: "rejected | see ERR",
    errors: [
      { segment: "PID", sequence: 1, field: 3, code: "101", text: "PID-3 is required" },
      { code: "207", severity: "W", text: "slow ^ backend & co" },
    ],
    now: NOW,
  });
  const lines = ack.split("\r");
  equal(lines.length, 4);
  equal(lines[1], "MSA|AE|CTRL-1|rejected \\F\\ see ERR");
  equal(lines[2], "ERR||PID^1^3|101^Required field missing^HL70357|E||||PID-3 is required");
  equal(lines[3], "ERR|||207^Application internal error^HL70357|W||||slow \\S\\ backend \\T\\ co");
  const back = readAck(ack);
  equal(back.code, "AE");
  equal(back.text, "rejected | see ERR");
  deepEqual(back.errors, [
    {
      segment: "PID",
      sequence: 1,
      field: 3,
      code: "101",
      severity: "E",
      text: "PID-3 is required",
    },
    { code: "207", severity: "W", text: "slow ^ backend & co" },
  ]);
});

Deno.test("buildAck: before v2.5 the error goes in ERR-1; readAck reads it", () => {
  const header = readHl7Header(message("2.3"));
  const ack = buildAck(header, {
    code: "AR",
    errors: [{ segment: "MSH", sequence: 1, field: 9, code: "200", text: "no & such" }],
    now: NOW,
  });
  const lines = ack.split("\r");
  match(lines[0], /\|ACK\^A01\|/); // no MSH-9.3 before v2.3.1
  equal(lines[2], "ERR|MSH^1^9^200&no \\T\\ such&HL70357");
  const back = readAck(ack);
  deepEqual(back.errors, [{
    segment: "MSH",
    sequence: 1,
    field: 9,
    code: "200",
    text: "no & such",
  }]);
  equal(back.text, "no & such"); // no MSA-3: the errors' texts
});

Deno.test("buildAck: v2.7 puts the text in an ERR (MSA-3 is withdrawn)", () => {
  const ack = buildAck(readHl7Header(message("2.7")), { code: "CE", text: "queue full", now: NOW });
  const lines = ack.split("\r");
  equal(lines[1], "MSA|CE|CTRL-1");
  equal(lines[2], "ERR|||207^Application internal error^HL70357|E||||queue full");
  equal(readAck(ack).text, "queue full");
  const ok = buildAck(readHl7Header(message("2.8")), { code: "CA", text: "stored", now: NOW });
  equal(ok.split("\r")[2], "ERR|||0^Message accepted^HL70357|I||||stored");
});

Deno.test("buildAck: the original's delimiters are kept and text escaped in them", () => {
  const header = readHl7Header(message("2.5", "#$*/!"));
  const ack = buildAck(header, { code: "AE", text: "a#b$c!d/e", controlId: "X", now: NOW });
  equal(
    ack,
    "MSH#$*/!#RECEIVER#SOUTH#SENDER#NORTH#20240102030405+0000##ACK$A01$ACK#X#P#2.5\r" +
      "MSA#AE#CTRL-1#a/F/b/S/c/T/d/E/e",
  );
  equal(readAck(ack).text, "a#b$c!d/e");
});

Deno.test("buildAck: without a header, a minimal ACK with default delimiters and empty MSA-2", () => {
  const ack = buildAck(undefined, { code: "AR", text: "no MSH", now: NOW });
  const lines = ack.split("\r");
  match(lines[0], /^MSH\|\^~\\&\|\|\|\|\|20240102030405\+0000\|\|ACK\|[0-9a-f]{20}\|P\|2\.5$/);
  equal(lines[1], "MSA|AR||no MSH");
  const back = readAck(ack);
  equal(back.controlId, "");
  equal(back.code, "AR");
});

Deno.test("buildAck: new control ids differ", () => {
  const h = readHl7Header(message("2.5"));
  const a = readAck(buildAck(h, { code: "AA" })).header.controlId;
  const b = readAck(buildAck(h, { code: "AA" })).header.controlId;
  match(a, /^[0-9a-f]{20}$/);
  equal(a === b, false);
});

Deno.test("readAck: refuses text without MSH or MSA and unknown codes", () => {
  const code = (text: string) => {
    try {
      readAck(text);
    } catch (e) {
      return (e as Hl7Error).code;
    }
    return "none";
  };
  equal(code("MSA|AA|1\r"), "no_msh");
  equal(code("MSH|^~\\&|A||||||ACK|1|P|2.5\r"), "no_msa");
  equal(code("MSH|^~\\&|A||||||ACK|1|P|2.5\rMSA|OK|1\r"), "bad_ack");
  throws(() => readAck("MSH|^~\\&|A||||||ACK|1|P|2.5\rMSA|XX|1"), Hl7Error);
  // LF-terminated ACKs (some senders) are read as well.
  equal(readAck("MSH|^~\\&|A||||||ACK|1|P|2.5\nMSA|CA|77\n").controlId, "77");
});
