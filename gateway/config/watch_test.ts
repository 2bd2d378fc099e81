/**
 * watchConfig with a ManualClock for its debounce: nothing here waits on the wall clock. That a
 * burst was seen in full, or that an unrelated file set no timer, is known by order: a marker
 * file written afterwards in a watched directory reaches the watcher after every earlier event.
 */
import assert from "node:assert/strict";
import { basename, join } from "node:path";
import { ManualClock } from "../../shared/mod.ts";
import { watchConfig, type WatchHooks } from "./watch.ts";

/** Counts onChange calls and lets a test wait for the event of a marker file. */
function observer() {
  const clock = new ManualClock();
  let calls = 0;
  let marks = 0;
  const waiting = new Map<string, () => void>();
  const hooks: WatchHooks = {
    clock,
    onEvent: (paths) => {
      for (const p of paths) {
        const done = waiting.get(basename(p));
        if (done) {
          waiting.delete(basename(p));
          done();
        }
      }
    },
  };
  return {
    clock,
    hooks,
    onChange: () => void calls++,
    get calls() {
      return calls;
    },
    /**
     * Writes a file no watcher reports (`.txt`) in `dir` and resolves once the watcher has
     * handled its event, so every event before it was handled too. The 10 s bound only turns
     * a lost event into a failure instead of a hang; it is not a pass condition.
     */
    async mark(dir: string): Promise<void> {
      const name = `mark-${++marks}.txt`;
      const seen = new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no event for ${name}`)), 10_000);
        waiting.set(name, () => {
          clearTimeout(timer);
          resolve();
        });
      });
      await Deno.writeTextFile(join(dir, name), "");
      await seen;
    },
  };
}

Deno.test("watchConfig: edits, rename-over saves and new pipeline files trigger one debounced call", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gw_watch_" });
  const main = join(dir, "gw.toml");
  const pipes = join(dir, "pipes");
  await Deno.mkdir(pipes);
  await Deno.writeTextFile(main, "a = 1\n");
  const seen = observer();
  // Deno.watchFs is armed when it returns: no wait before the first write.
  const watcher = watchConfig([main], [pipes], seen.onChange, 50, seen.hooks);
  try {
    // A burst of writes is reported once: every event of it only moves the one timer.
    for (let i = 0; i < 5; i++) await Deno.writeTextFile(main, `a = ${i}\n`);
    await seen.mark(dir);
    assert.equal(seen.calls, 0, "nothing before the quiet time");
    assert.equal(seen.clock.pending, 1, "one debounce timer for the whole burst");
    await seen.clock.advance(50);
    assert.equal(seen.calls, 1);
    await seen.clock.advance(1_000);
    assert.equal(seen.calls, 1, "no second call for the same burst");

    // Editors that write a temporary file and rename it over the original.
    await Deno.writeTextFile(join(dir, "gw.toml.tmp"), "a = 9\n");
    await Deno.rename(join(dir, "gw.toml.tmp"), main);
    await seen.mark(dir);
    await seen.clock.advance(50);
    assert.equal(seen.calls, 2);

    // A new file in a pipelines directory.
    await Deno.writeTextFile(join(pipes, "new.toml"), "");
    await seen.mark(pipes);
    await seen.clock.advance(50);
    assert.equal(seen.calls, 3);

    // Unrelated files are ignored: their events, handled before the marker's, set no timer.
    await Deno.writeTextFile(join(dir, "other.txt"), "x");
    await Deno.writeTextFile(join(pipes, "notes.md"), "x");
    await seen.mark(dir);
    await seen.mark(pipes);
    assert.equal(seen.clock.pending, 0);
    await seen.clock.advance(1_000);
    assert.equal(seen.calls, 3);
  } finally {
    watcher.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("watchConfig: close stops reporting; missing paths are skipped", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gw_watch_" });
  const main = join(dir, "gw.toml");
  await Deno.writeTextFile(main, "");
  const seen = observer();
  const watcher = watchConfig([main], [join(dir, "does_not_exist")], seen.onChange, 20, seen.hooks);
  // A change is pending (its debounce timer set) when the watcher closes: it is not reported.
  await Deno.writeTextFile(main, "a = 1\n");
  await seen.clock.waitForTimer(20);
  watcher.close();
  watcher.close();
  assert.equal(seen.clock.pending, 0);
  await seen.clock.advance(1_000);
  assert.equal(seen.calls, 0);

  // Nor is a change after the close: a second watcher on the same directory sees the write
  // (and its marker), the closed one sets no timer.
  const witness = observer();
  const second = watchConfig([main], [], witness.onChange, 20, witness.hooks);
  try {
    await Deno.writeTextFile(main, "a = 2\n");
    await witness.mark(dir);
    await witness.clock.advance(20);
    assert.equal(witness.calls, 1, "the write was there to be seen");
    assert.equal(seen.clock.pending, 0);
    await seen.clock.advance(1_000);
    assert.equal(seen.calls, 0);
  } finally {
    second.close();
  }
  watchConfig(["/nonexistent/dir/gw.toml"], [], seen.onChange).close();
  await Deno.remove(dir, { recursive: true });
});
