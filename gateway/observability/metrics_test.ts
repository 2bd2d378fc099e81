import assert from "node:assert/strict";
import { createMetrics, LATENCY_BUCKETS } from "./metrics.ts";
import { parseExposition, sampleValue } from "../../tests/support/metrics.ts";

Deno.test("every gateway metric is declared with HELP and TYPE", () => {
  const exp = parseExposition(createMetrics().render());
  const want: Record<string, string> = {
    gateway_requests_total: "counter",
    gateway_request_duration_seconds: "histogram",
    gateway_requests_in_flight: "gauge",
    gateway_backend_requests_total: "counter",
    gateway_backend_duration_seconds: "histogram",
    gateway_errors_total: "counter",
    gateway_config_reloads_total: "counter",
    gateway_start_time_seconds: "gauge",
    process_resident_memory_bytes: "gauge",
  };
  for (const [name, type] of Object.entries(want)) {
    assert.equal(exp.types.get(name), type, name);
    assert.ok(exp.help.get(name), `HELP of ${name}`);
  }
});

Deno.test("requests: in-flight gauge, counter by status, latency histogram", () => {
  const m = createMetrics();
  m.requestStarted("fhir");
  m.requestStarted("fhir");
  m.requestStarted("fhir");
  m.requestFinished("fhir", 200, 0.004);
  m.requestFinished("fhir", 502, 3);
  const exp = parseExposition(m.render());
  assert.equal(sampleValue(exp, "gateway_requests_in_flight", { pipeline: "fhir" }), 1);
  assert.equal(sampleValue(exp, "gateway_requests_total", { pipeline: "fhir", status: "200" }), 1);
  assert.equal(sampleValue(exp, "gateway_requests_total", { pipeline: "fhir", status: "502" }), 1);
  const bucket = (le: string) =>
    sampleValue(exp, "gateway_request_duration_seconds_bucket", { pipeline: "fhir", le });
  assert.equal(bucket("0.001"), 0);
  assert.equal(bucket("0.005"), 1);
  assert.equal(bucket("2.5"), 1);
  assert.equal(bucket("5"), 2);
  assert.equal(bucket("10"), 2);
  assert.equal(bucket("+Inf"), 2);
  assert.equal(
    sampleValue(exp, "gateway_request_duration_seconds_count", { pipeline: "fhir" }),
    2,
  );
  assert.equal(
    sampleValue(exp, "gateway_request_duration_seconds_sum", { pipeline: "fhir" }),
    3.004,
  );
  const les = exp.samples
    .filter((s) => s.name === "gateway_request_duration_seconds_bucket")
    .map((s) => s.labels.le);
  assert.deepEqual(les, [...LATENCY_BUCKETS.map(String), "+Inf"]);
});

Deno.test("backend calls by outcome, errors by code, reloads by outcome", () => {
  const m = createMetrics();
  m.backendCall("p", "api", "ok", 0.02);
  m.backendCall("p", "api", "ok", 0.03);
  m.backendCall("p", "api", "backend_timeout", 10.5);
  m.errorCode("no_route");
  m.errorCode("no_route");
  m.reload(true);
  m.reload(false);
  m.reload(true);
  const exp = parseExposition(m.render());
  const calls = (outcome: string) =>
    sampleValue(exp, "gateway_backend_requests_total", { pipeline: "p", backend: "api", outcome });
  assert.equal(calls("ok"), 2);
  assert.equal(calls("backend_timeout"), 1);
  const lbl = { pipeline: "p", backend: "api" };
  assert.equal(sampleValue(exp, "gateway_backend_duration_seconds_count", lbl), 3);
  assert.equal(
    sampleValue(exp, "gateway_backend_duration_seconds_bucket", { ...lbl, le: "10" }),
    2,
  );
  assert.equal(
    sampleValue(exp, "gateway_backend_duration_seconds_bucket", { ...lbl, le: "+Inf" }),
    3,
  );
  assert.equal(sampleValue(exp, "gateway_errors_total", { code: "no_route" }), 2);
  assert.equal(sampleValue(exp, "gateway_config_reloads_total", { outcome: "success" }), 2);
  assert.equal(sampleValue(exp, "gateway_config_reloads_total", { outcome: "failure" }), 1);
});

Deno.test("reload outcomes start at zero", () => {
  const exp = parseExposition(createMetrics().render());
  assert.equal(sampleValue(exp, "gateway_config_reloads_total", { outcome: "success" }), 0);
  assert.equal(sampleValue(exp, "gateway_config_reloads_total", { outcome: "failure" }), 0);
});

Deno.test("start time and resident memory are rendered at scrape", () => {
  let rss = 1000;
  const m = createMetrics({ startedAt: new Date(1_700_000_000_500), residentMemory: () => rss });
  let exp = parseExposition(m.render());
  assert.equal(sampleValue(exp, "gateway_start_time_seconds"), 1_700_000_000.5);
  assert.equal(sampleValue(exp, "process_resident_memory_bytes"), 1000);
  rss = 2048;
  exp = parseExposition(m.render());
  assert.equal(sampleValue(exp, "process_resident_memory_bytes"), 2048);
});

Deno.test("the default memory reading is Deno's resident set size", () => {
  const exp = parseExposition(createMetrics().render());
  const rss = sampleValue(exp, "process_resident_memory_bytes");
  assert.ok(rss !== undefined && rss > 0);
  const start = sampleValue(exp, "gateway_start_time_seconds")!;
  assert.ok(Math.abs(start - Date.now() / 1000) < 60);
});

Deno.test("pipeline and backend names with special characters stay parseable", () => {
  const m = createMetrics();
  m.backendCall('we"ird\\name', "b\nx", "ok", 0.001);
  const exp = parseExposition(m.render());
  assert.equal(
    sampleValue(exp, "gateway_backend_requests_total", {
      pipeline: 'we"ird\\name',
      backend: "b\nx",
      outcome: "ok",
    }),
    1,
  );
});

Deno.test("memory: each isolate's heap and budget gauges; a worker's values replace, not add", () => {
  const main = createMetrics();
  main.memory.source(() => ({ heapUsed: 10, heapLimit: 100, buffered: 3, budget: 12 }));
  const worker = createMetrics();
  let used = 20;
  worker.memory.source(() => ({ heapUsed: used, heapLimit: 100, buffered: 0, budget: 12 }));
  const global = globalThis as { name?: string };
  const name = global.name;
  const collect = () => {
    // As a data-plane worker named by the pool sees itself.
    global.name = "gateway-worker-1";
    try {
      main.addDataPlane(worker.takeDataPlaneDelta());
    } finally {
      global.name = name;
    }
  };
  collect();
  used = 15;
  collect();
  const exp = parseExposition(main.render());
  const value = (family: string, isolate: string) => sampleValue(exp, family, { worker: isolate });
  assert.equal(value("gateway_heap_used_bytes", "0"), 10);
  assert.equal(value("gateway_heap_used_bytes", "1"), 15);
  assert.equal(value("gateway_heap_limit_bytes", "1"), 100);
  assert.equal(value("gateway_buffered_body_bytes", "0"), 3);
  assert.equal(value("gateway_buffered_body_budget_bytes", "1"), 12);
  assert.equal(exp.types.get("gateway_heap_used_bytes"), "gauge");
  assert.ok(exp.help.get("gateway_heap_limit_bytes"));
});
