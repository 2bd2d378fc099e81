/**
 * MessageRouter: a C-STORE-RQ is assembled into its instance buffer and handed on once; every
 * other message is handed on whole (command and dataset), association PDUs as they are, in order.
 */
import type { Buffer } from "node:buffer";
import { assertEquals, assertRejects } from "../../../tests/assert.ts";
import { decodeCommand, encodeCommand } from "./command_set.ts";
import { InstanceBuffer } from "./instance_buffer.ts";
import { MessageRouter, type MessageTarget } from "./message_router.ts";
import { COMMAND, LAST, pdvPdu } from "./pdata.ts";
import { PduReader } from "./pdu_reader.ts";

type Seen =
  | ["pdu", number[]]
  | ["message", number, Record<string, unknown>, number[] | undefined]
  | ["store", number, Record<string, unknown>, number[]];

function harness() {
  const seen: Seen[] = [];
  const target: MessageTarget = {
    pdu: (pdu: Buffer) => seen.push(["pdu", [...pdu]]),
    message: (contextId, command, dataset) =>
      seen.push(["message", contextId, command, dataset && [...dataset]]),
    decodeCommand: (bytes) => decodeCommand(bytes)!,
    storeBuffer: () => new InstanceBuffer(new Uint8Array([0xaa, 0xbb]), 4),
    store: (contextId, command, file) => seen.push(["store", contextId, command, [...file.file()]]),
  };
  const reader = new PduReader(new MessageRouter(target));
  return { seen, push: (...pdus: Uint8Array[]) => pdus.forEach((p) => reader.push(p)) };
}

function command(elements: Record<string, unknown>): Uint8Array {
  return encodeCommand(elements)!;
}

const store = {
  AffectedSOPClassUID: "1.2.840.10008.5.1.4.1.1.2",
  CommandField: 1,
  MessageID: 5,
  CommandDataSetType: 0,
  AffectedSOPInstanceUID: "1.2.3.4",
};
const find = { CommandField: 0x20, MessageID: 6, CommandDataSetType: 0 };
const echo = { CommandField: 0x30, MessageID: 7, CommandDataSetType: 0x0101 };

Deno.test("a C-STORE-RQ in fragments is assembled once, behind its header", () => {
  const h = harness();
  const cmd = command(store);
  h.push(
    pdvPdu(1, COMMAND, cmd.subarray(0, 10)),
    pdvPdu(1, COMMAND | LAST, cmd.subarray(10)),
    pdvPdu(1, 0, new Uint8Array([1, 2, 3])),
    pdvPdu(1, 0, new Uint8Array([4, 5, 6, 7, 8])),
    pdvPdu(1, LAST, new Uint8Array([9])),
  );
  assertEquals(h.seen, [["store", 1, store, [0xaa, 0xbb, 1, 2, 3, 4, 5, 6, 7, 8, 9]]]);
});

Deno.test("other messages are handed on whole, in order, around a C-STORE", () => {
  const h = harness();
  const echoPdu = pdvPdu(1, COMMAND | LAST, command(echo));
  const findPdu = pdvPdu(3, COMMAND | LAST, command(find));
  h.push(
    echoPdu,
    findPdu,
    pdvPdu(3, 0, new Uint8Array([0x10, 0])),
    pdvPdu(3, LAST, new Uint8Array([0x20, 0])),
    pdvPdu(5, COMMAND | LAST, command(store)),
    pdvPdu(5, LAST, new Uint8Array([42])),
  );
  h.push(new Uint8Array([5, 0, 0, 0, 0, 4, 0, 0, 0, 0]));
  assertEquals(h.seen, [
    ["message", 1, echo, undefined],
    ["message", 3, find, [0x10, 0, 0x20, 0]],
    ["store", 5, store, [0xaa, 0xbb, 42]],
    ["pdu", [5, 0, 0, 0, 0, 4, 0, 0, 0, 0]],
  ]);
});

Deno.test("a command fragment inside a C-STORE dataset is a protocol error", async () => {
  const h = harness();
  h.push(pdvPdu(1, COMMAND | LAST, command(store)), pdvPdu(1, 0, new Uint8Array([1])));
  await assertRejects(
    () => h.push(pdvPdu(1, COMMAND | LAST, command(echo))),
    /C-STORE dataset was interrupted/,
  );
});

Deno.test("a dataset fragment without a command, or one interrupted, is a protocol error", async () => {
  await assertRejects(
    () => harness().push(pdvPdu(1, LAST, new Uint8Array([1]))),
    /has no command/,
  );
  const h = harness();
  h.push(pdvPdu(3, COMMAND | LAST, command(find)), pdvPdu(3, 0, new Uint8Array([1])));
  await assertRejects(
    () => h.push(pdvPdu(1, LAST, new Uint8Array([2]))),
    /dataset was interrupted/,
  );
});

Deno.test("a command set over 64 KiB is refused as it arrives", async () => {
  const h = harness();
  for (let i = 0; i < 2; i++) h.push(pdvPdu(1, COMMAND, new Uint8Array(30_000)));
  await assertRejects(
    () => h.push(pdvPdu(1, COMMAND, new Uint8Array(30_000))),
    /command set is over 64 KiB/,
  );
});
