/** Slab pieces: zeroed, never shared, and large ones get memory of their own. */
import { assert, assertEquals } from "../../../tests/assert.ts";
import { allocate, copyOf } from "./slab.ts";

Deno.test("slab: pieces are zeroed and do not overlap, across slabs", () => {
  const pieces: Uint8Array[] = [];
  for (let i = 0; i < 200; i++) {
    const piece = allocate(1000);
    assert(piece.every((b) => b === 0));
    piece.fill(i % 250 + 1);
    pieces.push(piece);
  }
  for (const [i, piece] of pieces.entries()) assert(piece.every((b) => b === i % 250 + 1));
  const copy = copyOf(new Uint8Array([1, 2, 3]));
  assertEquals(copy, new Uint8Array([1, 2, 3]));
  const large = allocate(100_000);
  assertEquals(large.byteOffset, 0);
  assertEquals(large.buffer.byteLength, 100_000);
});
