import assert from "node:assert/strict";
import { decidePeer, findBinary, requirePeer } from "./peers.ts";

Deno.test("findBinary: finds sh on PATH and nothing for an unknown name", () => {
  assert.match(findBinary("sh") ?? "", /\/sh$/);
  assert.equal(findBinary("no-such-binary-7c1e"), undefined);
  assert.equal(findBinary("/no/such/path/tool"), undefined);
});

Deno.test("decidePeer: present runs, missing skips locally and fails under CI", () => {
  assert.deepEqual(decidePeer("t", "sh", "dash", "/bin/sh", true), {
    action: "run",
    path: "/bin/sh",
  });
  const skip = decidePeer("wrk bench", "wrk", "wrk", undefined, false);
  assert.equal(skip.action, "skip");
  assert.match(skip.action === "skip" ? skip.message : "", /apt-get install wrk/);
  const fail = decidePeer("dicom tests", "echoscu", "dcmtk", undefined, true);
  assert.equal(fail.action, "fail");
  assert.match(fail.action === "fail" ? fail.error.message : "", /'dcmtk'.*CI=true/);
});

Deno.test("requirePeer: true for an installed binary", () => {
  assert.equal(requirePeer("shell", "sh", "dash"), true);
});
