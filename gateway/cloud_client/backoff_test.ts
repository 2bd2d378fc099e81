import assert from "node:assert/strict";
import { Backoff, sleep } from "./backoff.ts";
import { ManualClock } from "./clock.ts";

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

Deno.test("sleep: on its clock; ends early when the signal aborts, at once when already aborted", async () => {
  const clock = new ManualClock();
  const ac = new AbortController();
  let woke = false;
  const waiting = sleep(10_000, ac.signal, clock).then(() => woke = true);
  await clock.advance(9_999);
  assert.equal(woke, false);
  ac.abort();
  await waiting; // without the clock reaching 10 s
  assert.equal(clock.pending, 0, "its timer is cleared");
  await sleep(10_000, ac.signal, clock);
  assert.equal(clock.pending, 0, "no timer when already aborted");
  const full = sleep(1_000, new AbortController().signal, clock).then(() => woke = false);
  await clock.advance(1_000);
  await full;
  assert.equal(woke, false);
});
