import assert from "node:assert/strict";
import { cpuMsOf, parseStatusField, peakRssOf, resetPeakRss, rssOf } from "./rss.ts";
import { waitFor } from "./wait.ts";

Deno.test("parseStatusField: reads kB fields as bytes", () => {
  const status = "Name:\tdeno\nVmHWM:\t  2048 kB\nVmRSS:\t   1024 kB\n";
  assert.equal(parseStatusField(status, "VmRSS"), 1024 * 1024);
  assert.equal(parseStatusField(status, "VmHWM"), 2048 * 1024);
  assert.throws(() => parseStatusField(status, "VmSwap"), /no VmSwap/);
});

Deno.test("rssOf, peakRssOf, resetPeakRss: this process", () => {
  const rss = rssOf(Deno.pid);
  assert.ok(rss > 1024 * 1024, `rss ${rss}`);
  assert.equal(resetPeakRss(Deno.pid), true);
  assert.ok(peakRssOf(Deno.pid) >= rssOf(Deno.pid) - 4 * 1024 * 1024);
});

Deno.test("cpuMsOf: counts the CPU a process spends, not the time it waits", async () => {
  const before = cpuMsOf(Deno.pid);
  const end = performance.now() + 300;
  while (performance.now() < end) {
    // busy on purpose
  }
  const busy = cpuMsOf(Deno.pid) - before;
  // Some of the 300 ms on a core even on a loaded machine (ticks of 10 ms).
  assert(busy >= 10, `busy: ${busy} ms`);
  // A process blocked on its input (cat, until its stdin closes) has spent (almost) nothing,
  // however long it has waited: read once the kernel shows it asleep in that read.
  const cat = new Deno.Command("cat", { stdin: "piped", stdout: "null" }).spawn();
  try {
    await waitFor(
      () => Promise.resolve(/\) S /.test(Deno.readTextFileSync(`/proc/${cat.pid}/stat`))),
      { timeoutMs: 10_000, description: "cat asleep on its input" },
    );
    assert(cpuMsOf(cat.pid) <= 20, `waiting cat: ${cpuMsOf(cat.pid)} ms`);
  } finally {
    await cat.stdin.close();
    await cat.status;
  }
});
