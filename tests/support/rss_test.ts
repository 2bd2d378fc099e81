import assert from "node:assert/strict";
import { cpuMsOf, parseStatusField, peakRssOf, resetPeakRss, rssOf } from "./rss.ts";

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

Deno.test("cpuMsOf: counts the CPU this process spends, not the time it waits", async () => {
  const before = cpuMsOf(Deno.pid);
  const end = performance.now() + 300;
  while (performance.now() < end) {
    // busy on purpose
  }
  const busy = cpuMsOf(Deno.pid) - before;
  // Some of the 300 ms on a core even on a loaded machine (ticks of 10 ms).
  assert(busy >= 10, `busy: ${busy} ms`);
  const idleFrom = cpuMsOf(Deno.pid);
  await new Promise((r) => setTimeout(r, 200));
  assert(cpuMsOf(Deno.pid) - idleFrom < 100, "waiting costs (almost) no CPU");
});
