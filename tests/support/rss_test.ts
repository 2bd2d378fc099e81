import assert from "node:assert/strict";
import { parseStatusField, peakRssOf, resetPeakRss, rssOf } from "./rss.ts";

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
