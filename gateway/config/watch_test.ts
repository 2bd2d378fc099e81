import assert from "node:assert/strict";
import { join } from "node:path";
import { watchConfig } from "./watch.ts";

/** Counts onChange calls; `next()` resolves on the next call or rejects after `ms`. */
function counter() {
  let calls = 0;
  let wake: (() => void) | undefined;
  return {
    onChange: () => {
      calls++;
      wake?.();
    },
    get calls() {
      return calls;
    },
    next(ms = 3000): Promise<void> {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error("no change reported")), ms);
        wake = () => {
          clearTimeout(timer);
          wake = undefined;
          resolve();
        };
      });
    },
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

Deno.test("watchConfig: edits, rename-over saves and new pipeline files trigger one debounced call", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gw_watch_" });
  const main = join(dir, "gw.toml");
  const pipes = join(dir, "pipes");
  await Deno.mkdir(pipes);
  await Deno.writeTextFile(main, "a = 1\n");
  const seen = counter();
  const watcher = watchConfig([main], [pipes], seen.onChange, 50);
  try {
    await sleep(100);
    // A burst of writes is reported once.
    let next = seen.next();
    for (let i = 0; i < 5; i++) await Deno.writeTextFile(main, `a = ${i}\n`);
    await next;
    await sleep(200);
    assert.equal(seen.calls, 1);

    // Editors that write a temporary file and rename it over the original.
    next = seen.next();
    await Deno.writeTextFile(join(dir, "gw.toml.tmp"), "a = 9\n");
    await Deno.rename(join(dir, "gw.toml.tmp"), main);
    await next;

    // A new file in a pipelines directory.
    next = seen.next();
    await Deno.writeTextFile(join(pipes, "new.toml"), "");
    await next;

    // Unrelated files are ignored.
    await sleep(200);
    const before = seen.calls;
    await Deno.writeTextFile(join(dir, "other.txt"), "x");
    await Deno.writeTextFile(join(pipes, "notes.md"), "x");
    await sleep(300);
    assert.equal(seen.calls, before);
  } finally {
    watcher.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("watchConfig: close stops reporting; missing paths are skipped", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gw_watch_" });
  const main = join(dir, "gw.toml");
  await Deno.writeTextFile(main, "");
  const seen = counter();
  const watcher = watchConfig([main], [join(dir, "does_not_exist")], seen.onChange, 20);
  watcher.close();
  watcher.close();
  await Deno.writeTextFile(main, "a = 1\n");
  await sleep(200);
  assert.equal(seen.calls, 0);
  watchConfig(["/nonexistent/dir/gw.toml"], [], seen.onChange).close();
  await Deno.remove(dir, { recursive: true });
});
