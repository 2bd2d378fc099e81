import assert from "node:assert/strict";
import { createMetrics } from "../observability/mod.ts";
import { statusReport, type StatusSource } from "./status_report.ts";

function source(ready: boolean, healthy: boolean[]): StatusSource {
  const metrics = createMetrics();
  metrics.requestStarted("fhir");
  metrics.requestFinished("fhir", 200, 0.01);
  metrics.requestStarted("fhir");
  metrics.requestFinished("fhir", 502, 0.01);
  metrics.requestStarted("fhir");
  metrics.errorCode("no_route");
  return {
    version: "1.2.3",
    startedAt: new Date(Date.UTC(2030, 0, 1)),
    ready: () => ready,
    metrics,
    pipelines: () => [
      {
        name: "fhir",
        backends: [{
          name: "hapi",
          targets: healthy.map((h, i) => ({ name: `t${i}`, healthy: h })),
        }],
      },
      { name: "idle", backends: [{ name: "echo", targets: [] }] },
    ],
  };
}

Deno.test("statusReport: counts from the metrics, one check per target, uptime", () => {
  const body = statusReport(source(true, [true, true]), 4, false, Date.UTC(2030, 0, 1, 1));
  assert.deepEqual(body, {
    health: "healthy",
    software_version: "1.2.3",
    uptime_secs: 3600,
    config_version: 4,
    // Two requests of 10 ms each: 20 ms spent (the cloud charts the mean latency from it).
    pipelines: [
      { name: "fhir", requests: 2, errors: 1, duration_ms_sum: 20 },
      { name: "idle", requests: 0, errors: 0, duration_ms_sum: 0 },
    ],
    error_counts: { no_route: 1 },
    checks: [
      { name: "fhir/hapi/t0", status: "pass" },
      { name: "fhir/hapi/t1", status: "pass" },
    ],
  });
});

Deno.test("statusReport: degraded with a target down or a failed apply; unhealthy when not ready or the primary is down", () => {
  const now = Date.UTC(2030, 0, 2);
  assert.equal(statusReport(source(true, [true, false]), null, false, now).health, "degraded");
  assert.equal(statusReport(source(true, [true]), null, true, now).health, "degraded");
  assert.equal(statusReport(source(false, [true]), null, false, now).health, "unhealthy");
  const down = statusReport(source(true, [false, false]), null, false, now);
  assert.equal(down.health, "unhealthy");
  assert.deepEqual(down.checks.map((c) => c.status), ["fail", "fail"]);
});

Deno.test("statusReport: one check per delivery queue; retries or dead letters make it degraded", () => {
  const queue = (retrying: number, dead: number) => ({
    backend: "pacs",
    depth: retrying,
    bytes: 0,
    in_flight: 0,
    retrying,
    dead,
    oldest_age_secs: retrying ? 90 : 0,
    delivered_total: 10,
    retried_total: 3,
    dead_lettered_total: dead,
  });
  const calm = { ...source(true, [true]), queueStats: () => [queue(0, 0)] };
  const ok = statusReport(calm, 1, false, Date.UTC(2030, 0, 1));
  assert.equal(ok.health, "healthy");
  assert.deepEqual(ok.checks[0], { name: "queue/pacs", status: "pass" });
  const stuck = { ...source(true, [true]), queueStats: () => [queue(4, 1)] };
  const bad = statusReport(stuck, 1, false, Date.UTC(2030, 0, 1));
  assert.equal(bad.health, "degraded");
  assert.deepEqual(bad.checks[0], {
    name: "queue/pacs",
    status: "warn",
    message: "4 waiting (oldest 90 s), 4 being retried, 1 dead letters",
  });
});

Deno.test("statusReport: a queue paused by its disk fails its check; other degraded components are listed", () => {
  const base = source(true, [true]);
  const queue = {
    backend: "out",
    depth: 1,
    bytes: 10,
    in_flight: 0,
    dead: 0,
    oldest_age_secs: 3,
    delivered_total: 0,
    retried_total: 0,
    dead_lettered_total: 0,
    degraded: { reason: "the dead letter of message x cannot be written", since: "2030" },
  };
  const body = statusReport(
    {
      ...base,
      queueStats: () => [queue],
      degraded: () => [
        { component: "queue/out", reason: "the dead letter …", since: "2030" },
        { component: "management_token", reason: "cannot save it: ENOSPC", since: "2030" },
      ],
    },
    null,
    false,
    Date.UTC(2030, 0, 2),
  );
  // Degraded, not unhealthy: the rest of the gateway serves.
  assert.equal(body.health, "degraded");
  assert.deepEqual(body.checks.slice(0, 2), [
    {
      name: "queue/out",
      status: "fail",
      message: "paused: the dead letter of message x cannot be written",
    },
    { name: "management_token", status: "fail", message: "cannot save it: ENOSPC" },
  ]);
});
