import assert from "node:assert/strict";
import { formatBytes, formatDuration } from "./time.ts";

Deno.test("time: durations and sizes for humans", () => {
  assert.equal(formatDuration(0), "expired");
  assert.equal(formatDuration(-5), "expired");
  assert.equal(formatDuration(59_000), "59s");
  assert.equal(formatDuration(61_000), "1m 1s");
  assert.equal(formatDuration(600_000), "10m");
  assert.equal(formatDuration(86_340_000), "23h 59m");
  assert.equal(formatDuration(90_061_000), "1d 1h");
  assert.equal(formatDuration(30 * 86_400_000), "30d");
  assert.equal(formatBytes(512), "512 B");
  assert.equal(formatBytes(1536), "1.5 KiB");
  assert.equal(formatBytes(5 * 1024 * 1024), "5.0 MiB");
});
