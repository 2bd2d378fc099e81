/** InstanceBuffer: one copy behind the header, growth past the expected size, spooled slices. */
import { assert, assertEquals } from "../../../tests/assert.ts";
import { type FileSpool, InstanceBuffer, prefaulted, SPOOL_SLICE } from "./instance_buffer.ts";

const bytes = (n: number, seed: number) =>
  Uint8Array.from({ length: n }, (_, i) => (i * 13 + seed) & 255);

function join(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}

function fill(buffer: InstanceBuffer, pieces: Uint8Array[]): Uint8Array {
  for (const p of pieces) buffer.write(p);
  return buffer.file();
}

Deno.test("InstanceBuffer: the file is the header and the fragments, whatever the expected size", () => {
  const header = bytes(132, 1);
  const pieces = [bytes(65_530, 2), bytes(65_530, 3), bytes(1_000, 4)];
  const expected = join([header, ...pieces]);
  for (const hint of [0, 1_000, 132_060, 500_000]) {
    const buffer = new InstanceBuffer(header, hint);
    const file = fill(buffer, pieces);
    assertEquals(file, expected, `expected size ${hint}`);
    assertEquals(buffer.datasetLength, 132_060);
    // A much larger allocation than the file is not kept behind it.
    assert(file.buffer.byteLength <= expected.byteLength + Math.max(expected.byteLength, 1 << 16));
  }
});

Deno.test("InstanceBuffer: a spool gets the whole file in order, in slices below 64 KiB", () => {
  const header = bytes(200, 5);
  const pieces = [bytes(10, 6), bytes(70_000, 7), bytes(65_536, 8), bytes(3, 9)];
  const slices: Uint8Array[] = [];
  const spool: FileSpool = { write: (b) => slices.push(b.slice()), abort: () => {} };
  for (const hint of [0, 135_549]) {
    slices.length = 0;
    const file = fill(new InstanceBuffer(header, hint, spool), pieces);
    assertEquals(join(slices), file);
    assert(slices.every((s) => s.byteLength <= SPOOL_SLICE && s.byteLength > 0));
  }
});

Deno.test("InstanceBuffer: prepared memory is used when large enough, else left alone", () => {
  const header = bytes(140, 10);
  const pieces = [bytes(50_000, 11), bytes(20_000, 12)];
  const expected = join([header, ...pieces]);
  const spare = prefaulted(70_140 + 512);
  assertEquals(spare.every((b) => b === 0), true);
  const file = fill(new InstanceBuffer(header, 70_000, undefined, spare), pieces);
  assertEquals(file, expected);
  assert(file.buffer === spare.buffer, "the prepared memory holds the file");
  const small = prefaulted(1_000);
  const other = fill(new InstanceBuffer(header, 70_000, undefined, small), pieces);
  assertEquals(other, expected);
  assert(other.buffer !== small.buffer);
});
