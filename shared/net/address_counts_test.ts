/** Per-address connection counts: the cap, release, a full window, one table for two listeners. */
import { assertEquals } from "../../tests/assert.ts";
import { AddressCounts } from "./address_counts.ts";

Deno.test("address counts: the cap per address, release, and addresses apart", () => {
  const counts = new AddressCounts();
  assertEquals([1, 2, 3].map(() => counts.acquire("10.0.0.1", 2)), [
    "counted",
    "counted",
    "refused",
  ]);
  assertEquals(counts.acquire("10.0.0.2", 2), "counted");
  counts.release("10.0.0.1");
  assertEquals(counts.acquire("10.0.0.1", 2), "counted");
});

Deno.test("address counts: a window full of live addresses lets a new one through uncounted", () => {
  const counts = new AddressCounts(new SharedArrayBuffer(AddressCounts.bytesFor(8)));
  for (let i = 0; i < 8; i++) assertEquals(counts.acquire(`10.0.0.${i}`, 1), "counted");
  assertEquals(counts.acquire("10.0.1.1", 1), "uncounted");
  counts.release("10.0.0.3"); // a slot is free again
  assertEquals(counts.acquire("10.0.1.1", 1), "counted");
  assertEquals(counts.acquire("10.0.1.1", 1), "refused");
});

Deno.test("address counts: two views of one buffer share the cap", () => {
  const buffer = new SharedArrayBuffer(AddressCounts.bytesFor());
  const [a, b] = [new AddressCounts(buffer), new AddressCounts(buffer)];
  assertEquals([a.acquire("::1", 2), b.acquire("::1", 2), a.acquire("::1", 2)], [
    "counted",
    "counted",
    "refused",
  ]);
  b.release("::1");
  assertEquals(a.acquire("::1", 2), "counted");
});
