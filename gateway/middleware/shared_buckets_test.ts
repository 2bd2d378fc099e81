/** Shared token buckets: refill and burst, eviction of the least recently used, and one limit across threads. */
import { assert, assertEquals } from "../../tests/assert.ts";
import { fingerprint } from "../../shared/net/mod.ts";
import { SharedBuckets } from "./shared_buckets.ts";

Deno.test("shared buckets: burst, refill, separate keys", () => {
  const t = new SharedBuckets(new SharedArrayBuffer(SharedBuckets.bytesFor(100)), 100);
  const rate = 2 / 1000; // 2 per second
  const passes = (key: string, now: number) => t.take(key, now, rate, 3) >= 1;
  assertEquals([0, 0, 0, 0].map((n) => passes("a", n)), [true, true, true, false]);
  assertEquals(passes("b", 0), true);
  assertEquals([passes("a", 500), passes("a", 500)], [true, false]);
  assertEquals(passes("a", 10_000), true); // refilled, capped at the burst
  assertEquals([passes("a", 10_000), passes("a", 10_000), passes("a", 10_000)], [
    true,
    true,
    false,
  ]);
});

Deno.test("shared buckets: a full table forgets the least recently used key", () => {
  const t = new SharedBuckets(new SharedArrayBuffer(SharedBuckets.bytesFor(4)), 4);
  const rate = 1 / 1000;
  for (const [i, key] of ["a", "b", "c", "d"].entries()) t.take(key, i, rate, 1);
  assertEquals(t.take("a", 10, rate, 1) >= 1, false); // a's bucket is still held: empty
  t.take("e", 11, rate, 1); // the table is full: b (least recently used) goes
  assertEquals(t.take("b", 12, rate, 1) >= 1, true); // b starts again full
});

Deno.test("shared buckets: fingerprints are 53-bit, non-zero, and spread", () => {
  const seen = new Set<number>();
  for (let i = 0; i < 100_000; i++) {
    const fp = fingerprint(`10.0.${i >> 8}.${i & 255}`);
    assert(fp > 0 && Number.isSafeInteger(fp));
    seen.add(fp);
  }
  assertEquals(seen.size, 100_000);
});

Deno.test("shared buckets: two threads taking from one bucket never pass more than it holds", async () => {
  const memory = new SharedArrayBuffer(SharedBuckets.bytesFor(16));
  const burst = 50_000;
  const source = `
    import { SharedBuckets } from ${
    JSON.stringify(new URL("./shared_buckets.ts", import.meta.url).href)
  };
    self.onmessage = (e) => {
      const t = new SharedBuckets(e.data.memory, 16);
      let passed = 0;
      for (let i = 0; i < 40_000; i++) if (t.take("one", 0, 0, ${burst}) >= 1) passed++;
      self.postMessage(passed);
    };`;
  const url = URL.createObjectURL(new Blob([source], { type: "application/javascript" }));
  const workers = [0, 1].map(() => new Worker(url, { type: "module" }));
  try {
    const counts = await Promise.all(workers.map((w) =>
      new Promise<number>((resolve) => {
        w.onmessage = (e) => resolve(e.data);
        w.postMessage({ memory });
      })
    ));
    // 80,000 attempts at a bucket of 50,000 that does not refill: exactly 50,000 pass.
    assertEquals(counts[0] + counts[1], burst);
  } finally {
    workers.forEach((w) => w.terminate());
    URL.revokeObjectURL(url);
  }
});
