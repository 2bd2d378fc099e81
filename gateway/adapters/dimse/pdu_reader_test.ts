/** PduReader reports the same PDUs and PDVs however the stream is cut into chunks. */
import { assertEquals, assertRejects } from "../../../tests/assert.ts";
import { COMMAND, LAST, pdvPdu } from "./pdata.ts";
import { type PduEvents, PduReader } from "./pdu_reader.ts";

/** What a reader reported: PDUs as byte arrays, PDVs with their value joined. */
type Event = ["pdu", number[]] | ["pdv", number, number, number[]];

function recorder(): { events: Event[]; sink: PduEvents } {
  const events: Event[] = [];
  let pdv: Extract<Event, ["pdv", ...unknown[]]> | undefined;
  return {
    events,
    sink: {
      pdu: (pdu) => events.push(["pdu", [...pdu]]),
      pdvStart: (contextId, control) => pdv = ["pdv", contextId, control, []],
      pdvValue: (piece) => pdv![3].push(...piece),
      pdvEnd: () => events.push(pdv!),
    },
  };
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}

const bytes = (n: number, seed: number) =>
  Uint8Array.from({ length: n }, (_, i) => (i * 7 + seed) & 255);

/** A P-DATA-TF PDU holding two PDVs. */
function twoPdvs(): Uint8Array {
  const a = bytes(5, 1);
  const b = bytes(300, 2);
  const body = new Uint8Array(4 + 2 + a.length + 4 + 2 + b.length);
  const view = new DataView(body.buffer);
  view.setUint32(0, a.length + 2);
  body.set([3, COMMAND | LAST], 4);
  body.set(a, 6);
  view.setUint32(6 + a.length, b.length + 2);
  body.set([3, 0], 10 + a.length);
  body.set(b, 12 + a.length);
  const head = new Uint8Array(6);
  head[0] = 4;
  new DataView(head.buffer).setUint32(2, body.length);
  return concat(head, body);
}

const associate = concat(new Uint8Array([1, 0, 0, 0, 0, 10]), bytes(10, 3));
const release = new Uint8Array([5, 0, 0, 0, 0, 4, 0, 0, 0, 0]);
const stream = concat(
  associate,
  pdvPdu(1, COMMAND | LAST, bytes(20, 4)),
  twoPdvs(),
  pdvPdu(3, LAST, new Uint8Array(0)),
  pdvPdu(3, LAST, bytes(70_000, 5)),
  release,
);

const expected: Event[] = [
  ["pdu", [...associate]],
  ["pdv", 1, COMMAND | LAST, [...bytes(20, 4)]],
  ["pdv", 3, COMMAND | LAST, [...bytes(5, 1)]],
  ["pdv", 3, 0, [...bytes(300, 2)]],
  ["pdv", 3, LAST, []],
  ["pdv", 3, LAST, [...bytes(70_000, 5)]],
  ["pdu", [...release]],
];

function read(chunks: Uint8Array[]): Event[] {
  const { events, sink } = recorder();
  const reader = new PduReader(sink);
  for (const c of chunks) reader.push(c);
  return events;
}

Deno.test("PduReader: one chunk, byte by byte, and every cut of two chunks", () => {
  assertEquals(read([stream]), expected);
  assertEquals(read([...stream].map((b) => new Uint8Array([b]))), expected);
  for (let cut = 1; cut < 400; cut++) {
    assertEquals(read([stream.subarray(0, cut), stream.subarray(cut)]), expected, `cut ${cut}`);
  }
  const chunks: Uint8Array[] = [];
  for (let at = 0; at < stream.length; at += 4093) chunks.push(stream.subarray(at, at + 4093));
  assertEquals(read(chunks), expected);
});

Deno.test("PduReader: PDV values are views of the received chunk", () => {
  const pdu = pdvPdu(1, LAST, bytes(100, 6));
  const pieces: Uint8Array[] = [];
  new PduReader({
    pdu() {},
    pdvStart() {},
    pdvValue: (piece) => pieces.push(piece),
    pdvEnd() {},
  }).push(pdu);
  assertEquals(pieces.length, 1);
  assertEquals(pieces[0].buffer, pdu.buffer);
});

Deno.test("PduReader: unknown PDU types and PDVs longer than their PDU are errors", async () => {
  const sink = recorder().sink;
  await assertRejects(
    () => new PduReader(sink).push(new Uint8Array([9, 0, 0, 0, 0, 0])),
    /unknown PDU type 9/,
  );
  const long = pdvPdu(1, LAST, bytes(10, 7));
  new DataView(long.buffer, long.byteOffset).setUint32(6, 50);
  await assertRejects(() => new PduReader(sink).push(long), /PDV length 50/);
  const short = pdvPdu(1, LAST, bytes(10, 7));
  new DataView(short.buffer, short.byteOffset).setUint32(2, 20);
  await assertRejects(() => new PduReader(sink).push(short), /after the last PDV/);
  // An association PDU claiming 4 GiB is refused at its header, before anything is allocated.
  await assertRejects(
    () => new PduReader(sink).push(new Uint8Array([1, 0, 0xff, 0xff, 0xff, 0xff])),
    /of 4294967295 bytes is over 1048576/,
  );
});
