import assert from "node:assert/strict";
import { Backoff, sleep } from "./backoff.ts";

Deno.test("Backoff: doubles up to the maximum, jittered between 50 and 100 %, reset starts over", () => {
  const low = new Backoff(1000, 8000, () => 0);
  assert.deepEqual([1, 2, 3, 4, 5].map(() => low.next()), [500, 1000, 2000, 4000, 4000]);
  const high = new Backoff(1000, 8000, () => 0.999999);
  assert.deepEqual([1, 2, 3, 4, 5].map(() => high.next()), [1000, 2000, 4000, 8000, 8000]);
  assert.equal(high.attempts, 5);
  high.reset();
  assert.equal(high.attempts, 0);
  assert.equal(high.next(), 1000);
});

Deno.test("sleep: ends early when the signal aborts, at once when already aborted", async () => {
  const ac = new AbortController();
  const started = performance.now();
  const waiting = sleep(10_000, ac.signal);
  setTimeout(() => ac.abort(), 20);
  await waiting;
  assert.ok(performance.now() - started < 1000);
  const t = performance.now();
  await sleep(10_000, ac.signal);
  assert.ok(performance.now() - t < 50);
});
