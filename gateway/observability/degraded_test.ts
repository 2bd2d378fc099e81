import assert from "node:assert/strict";
import { degradedHealth } from "../../tests/support/degraded_health.ts";

Deno.test("DegradedComponents: one log line per change of state, the gauge, the list", () => {
  const { lines, health, gauge } = degradedHealth();
  const owner = {};
  health.degraded("queue/out", "ENOSPC", owner);
  health.degraded("queue/out", "ENOSPC again", owner);
  health.degraded("queue/out", "EIO", owner);
  assert.deepEqual(lines.map((l) => [l.level, l.msg, l.component]), [
    ["error", "component degraded", "queue/out"],
  ]);
  assert.equal(gauge("queue/out"), 1);
  const [listed] = health.list();
  assert.equal(listed.component, "queue/out");
  assert.equal(listed.reason, "EIO", "the newest reason is shown");
  health.recovered("queue/out", owner);
  health.recovered("queue/out", owner);
  assert.deepEqual(lines.map((l) => l.msg), ["component degraded", "component recovered"]);
  assert.equal(gauge("queue/out"), 0);
  assert.deepEqual(health.list(), []);
});

Deno.test("DegradedComponents: a successor's state is not cleared by the one it replaced", () => {
  const { lines, health } = degradedHealth();
  const old = {};
  const successor = {};
  health.degraded("queue/out", "ENOSPC", successor);
  health.recovered("queue/out", old, true);
  assert.equal(health.list().length, 1);
  health.recovered("queue/out", successor, true);
  assert.equal(health.list().length, 0);
  assert.deepEqual(lines.map((l) => l.msg), ["component degraded"], "quiet: no recovery line");
});
