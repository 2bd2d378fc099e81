import assert from "node:assert/strict";
import { every, ManualClock, sleep, systemClock, timeoutSignal } from "./clock.ts";

Deno.test("ManualClock: timers fire on advance, earliest first, only manual time counts", async () => {
  const clock = new ManualClock();
  const fired: string[] = [];
  clock.setTimeout(() => fired.push("b"), 200);
  clock.setTimeout(() => fired.push("a"), 100);
  const cleared = clock.setTimeout(() => fired.push("never"), 50);
  clock.clearTimeout(cleared);
  await clock.advance(99);
  assert.equal(fired.length, 0);
  // A timer set by a fired one counts from the new time: the next advance fires it.
  clock.setTimeout(() => clock.setTimeout(() => fired.push("c"), 50), 1);
  await clock.advance(101);
  assert.deepEqual(fired, ["a", "b"]);
  await clock.advance(49);
  assert.deepEqual(fired, ["a", "b"]);
  await clock.advance(1);
  assert.deepEqual(fired, ["a", "b", "c"]);
  assert.equal(clock.pending, 0);
  const before = clock.now();
  void clock.advance(60_000);
  assert.ok(clock.now() - before >= 60_000, "now() moves at once");
});

Deno.test("sleep and timeoutSignal on a manual clock; waitForTimer tells when code waits", async () => {
  const clock = new ManualClock();
  let woke = false;
  const sleeping = sleep(clock, 5_000).then(() => woke = true);
  await clock.waitForTimer(5_000);
  await clock.advance(4_999);
  assert.equal(woke, false);
  await clock.advance(1);
  await sleeping;
  assert.equal(woke, true);

  const ac = new AbortController();
  const aborted = sleep(clock, 1_000, ac.signal);
  ac.abort(new Error("stop"));
  await assert.rejects(aborted, /stop/);
  assert.equal(clock.pending, 0, "an aborted sleep clears its timer");

  const signal = timeoutSignal(clock, 30_000);
  await clock.advance(30_000);
  assert.equal(signal.aborted, true);
  assert.equal((signal.reason as DOMException).name, "TimeoutError");
  assert.equal(timeoutSignal(systemClock, 10_000).aborted, false);
});

Deno.test("every: a periodic call on a manual clock runs once per advance that reaches it, until stopped", async () => {
  const clock = new ManualClock();
  let calls = 0;
  const stop = every(clock, 100, () => calls++);
  await clock.advance(99);
  assert.equal(calls, 0);
  await clock.advance(1);
  assert.equal(calls, 1);
  await clock.advance(1_000); // one call for the whole span: it sees the new time once
  assert.equal(calls, 2);
  stop();
  await clock.advance(1_000);
  assert.equal(calls, 2);
  assert.equal(clock.pending, 0);
});

Deno.test("every: on the system clock, an interval until stopped", async () => {
  let calls = 0;
  const twice = Promise.withResolvers<void>();
  const stop = every(systemClock, 1, () => {
    if (++calls === 2) twice.resolve();
  });
  await twice.promise;
  stop(); // the test's sanitizer fails on a timer left running
});
