import assert from "node:assert/strict";
import { connectionsForRate, fixed, fixedJsonBody, markdownTable, verdict } from "./report.ts";

Deno.test("fixedJsonBody: exact size, valid JSON, nothing nginx would interpret", () => {
  const body = fixedJsonBody(1024);
  assert.equal(new TextEncoder().encode(body).byteLength, 1024);
  assert.equal(JSON.parse(body).resourceType, "Bundle");
  assert.doesNotMatch(body, /['$\\]/);
  assert.throws(() => fixedJsonBody(10), /at least/);
});

Deno.test("connectionsForRate: rate times interval, at least one", () => {
  assert.equal(connectionsForRate(5000, 10), 50);
  assert.equal(connectionsForRate(10, 10), 1);
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
});
