import assert from "node:assert/strict";
import { fixed, fixedJsonBody, markdownTable, verdict } from "./report.ts";

Deno.test("fixedJsonBody: exact size, valid JSON, nothing nginx would interpret", () => {
  const body = fixedJsonBody(1024);
  assert.equal(new TextEncoder().encode(body).byteLength, 1024);
  assert.equal(JSON.parse(body).resourceType, "Bundle");
  assert.doesNotMatch(body, /['$\\]/);
  assert.throws(() => fixedJsonBody(10), /at least/);
});

Deno.test("markdownTable, fixed, verdict", () => {
  assert.equal(
    markdownTable(["target", "req/s"], [["nginx", "100.00"], ["gw", "5.00"]]),
    "| target |  req/s |\n|--------|-------:|\n| nginx  | 100.00 |\n| gw     |   5.00 |",
  );
  assert.equal(fixed(1 / 3), "0.33");
  assert.equal(fixed(NaN), "n/a");
  assert.equal(verdict(0.6, ">=", 0.6), "PASS");
  assert.equal(verdict(1.2, "<", 1), "MISS");
  assert.equal(verdict(1, "<=", 1), "PASS");
});
