/**
 * Group commit: records of concurrent requests share one write; batches are written one at a
 * time, in order, each settling its waiters only when its write has ended; the batch after a
 * running write is what came during it; a batch is cut at `maxBatch`; a failed write rejects its
 * own waiters only, and the next batch is written as usual.
 */
import { assertEquals, assertRejects } from "../../tests/assert.ts";
import { GroupCommit } from "./group_commit.ts";

/** A writer whose writes end when the test says so. */
function gatedWriter() {
  const batches: string[][] = [];
  const gates: PromiseWithResolvers<void>[] = [];
  const started: PromiseWithResolvers<void>[] = [Promise.withResolvers()];
  return {
    batches,
    /** Resolves when write `n` (0-based) has started. */
    started: async (n: number) => {
      while (started.length <= n) started.push(Promise.withResolvers());
      await started[n].promise;
    },
    /** Ends write `n`, successfully or with `err`. */
    end: (n: number, err?: Error) => err ? gates[n].reject(err) : gates[n].resolve(),
    write: (batch: string[]) => {
      const n = batches.length;
      batches.push([...batch]);
      const gate = Promise.withResolvers<void>();
      gates.push(gate);
      while (started.length <= n) started.push(Promise.withResolvers());
      started[n].resolve();
      return gate.promise;
    },
  };
}

/** One turn of the event loop: lets timers of 0 ms and settled promises run. */
const turn = () => new Promise((r) => setTimeout(r, 0));

Deno.test("group commit: concurrent records share a write; the next batch is what came during it", async () => {
  const w = gatedWriter();
  let delay = 0;
  const gc = new GroupCommit<string>({ write: w.write, delayMs: () => delay, maxBatch: 512 });
  const settled: string[] = [];
  const a = gc.add(["a"], true)!.then(() => settled.push("a"));
  const b = gc.add(["b", "c"], true)!.then(() => settled.push("bc"));
  await w.started(0);
  assertEquals(w.batches, [["a", "b", "c"]]);
  // While the write runs, later records gather; a long delay shows they do not wait for it.
  delay = 60_000;
  const d = gc.add(["d"], true)!.then(() => settled.push("d"));
  const e = gc.add(["e"], true)!.then(() => settled.push("e"));
  await turn();
  assertEquals(w.batches.length, 1, "one write at a time");
  assertEquals(settled, [], "nothing is released before its write has ended");
  w.end(0);
  await Promise.all([a, b]);
  await w.started(1);
  assertEquals(w.batches, [["a", "b", "c"], ["d", "e"]]);
  assertEquals(settled, ["a", "bc"]);
  w.end(1);
  await Promise.all([d, e]);
  assertEquals(settled, ["a", "bc", "d", "e"]);
});

Deno.test("group commit: a batch is cut at maxBatch without waiting for the delay", async () => {
  const w = gatedWriter();
  const gc = new GroupCommit<string>({ write: w.write, delayMs: () => 60_000, maxBatch: 3 });
  const first = gc.add(["x", "y"], true)!;
  await turn();
  assertEquals(w.batches, [], "two of three: the batch still gathers");
  const second = gc.add(["z"], true)!;
  await w.started(0);
  assertEquals(w.batches, [["x", "y", "z"]]);
  assertEquals(first, second, "records of one batch share its promise");
  w.end(0);
  await first;
  assertEquals(gc.length, 0);
});

Deno.test("group commit: a failed write rejects its own waiters only; the next batch is written", async () => {
  const w = gatedWriter();
  const gc = new GroupCommit<string>({ write: w.write, delayMs: () => 0, maxBatch: 512 });
  const ok = gc.add(["1"], true)!;
  await w.started(0);
  const failing = gc.add(["2"], true)!;
  w.end(0);
  await ok;
  await w.started(1);
  w.end(1, new Error("EIO: fdatasync failed"));
  await assertRejects(() => failing, /EIO/);
  const after = gc.add(["3"], true)!;
  await w.started(2);
  w.end(2);
  await after;
  assertEquals(w.batches, [["1"], ["2"], ["3"]]);
});

Deno.test("group commit: records nobody waits for are written by flush, or at maxBatch", async () => {
  const w = gatedWriter();
  let owed = false;
  const gc = new GroupCommit<string>({
    write: w.write,
    delayMs: () => 0,
    maxBatch: 512,
    owed: () => owed,
  });
  assertEquals(gc.add(["p"], false), undefined);
  await turn();
  assertEquals(w.batches, [], "no timer for a batch without waiters");
  const flushed = gc.flush();
  await w.started(0);
  w.end(0);
  await flushed;
  // Nothing queued, nothing owed: no write. Something owed (a note of lost records): a write.
  await gc.flush();
  assertEquals(w.batches, [["p"]]);
  owed = true;
  const again = gc.flush();
  await w.started(1);
  w.end(1);
  await again;
  assertEquals(w.batches, [["p"], []]);
});
