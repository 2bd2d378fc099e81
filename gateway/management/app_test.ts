import assert from "node:assert/strict";
import { parseExposition, sampleValue } from "../../tests/support/metrics.ts";
import { createManagementApp, MAX_BODY_BYTES, METRICS_CONTENT_TYPE } from "./mod.ts";
import { authed, fakeControl, memoryLogger, TEST_GUARD } from "../../tests/support/management.ts";

const BASE = "http://127.0.0.1:9090";
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

function setup() {
  const { control, state } = fakeControl();
  const { logger, lines } = memoryLogger();
  const app = createManagementApp(control, logger, TEST_GUARD);
  const call = (path: string, init?: RequestInit) => app.fetch(authed(BASE + path, init));
  return { app, control, state, lines, call };
}

async function errorOf(
  res: Response,
): Promise<{ code: string; message: string; request_id: string }> {
  assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
  const body = await res.json();
  assert.ok(body.error, "error envelope");
  assert.equal(body.error.request_id, res.headers.get("x-request-id"));
  return body.error;
}

Deno.test("GET /healthz answers ok", async () => {
  const { call } = setup();
  const res = await call("/healthz");
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), { status: "ok" });
  assert.equal(res.headers.get("cache-control"), "no-store");
});

Deno.test("GET /readyz follows control.ready()", async () => {
  const { call, state } = setup();
  let res = await call("/readyz");
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), { status: "ready" });
  state.ready = false;
  res = await call("/readyz");
  assert.equal(res.status, 503);
  assert.deepEqual(await res.json(), { status: "not_ready" });
  state.ready = true;
  assert.equal((await call("/readyz")).status, 200);
});

Deno.test("GET /readyz stays ready with a degraded component, and names it", async () => {
  const { app } = setup();
  const { control } = fakeControl();
  const degraded = [{
    component: "queue/out",
    reason: "the dead letter of message x cannot be written: ENOSPC (no space left on the device)",
    since: "2030-01-01T00:00:00.000Z",
  }];
  control.degraded = () => degraded;
  const { logger } = memoryLogger();
  const withDegraded = createManagementApp(control, logger, TEST_GUARD);
  const res = await withDegraded.fetch(new Request(BASE + "/readyz"));
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), { status: "ready", degraded });
  // Nothing degraded: the body stays as it always was.
  assert.deepEqual(await (await app.fetch(new Request(BASE + "/readyz"))).json(), {
    status: "ready",
  });
});

Deno.test("GET /readyz answers 503 while a worker is unresponsive, and names it", async () => {
  const { control } = fakeControl();
  let unresponsive = [{ index: 2, silent_ms: 2500, reason: "no answer to the watchdog" }];
  control.unresponsiveWorkers = () => unresponsive;
  const { logger } = memoryLogger();
  const app = createManagementApp(control, logger, TEST_GUARD);
  const res = await app.fetch(new Request(BASE + "/readyz"));
  assert.equal(res.status, 503);
  assert.deepEqual(await res.json(), { status: "not_ready", unresponsive_workers: unresponsive });
  unresponsive = [];
  assert.equal((await app.fetch(new Request(BASE + "/readyz"))).status, 200);
});

Deno.test("GET /metrics renders the gateway's Prometheus text", async () => {
  const { call, control } = setup();
  control.metrics.requestStarted("fhir_proxy");
  control.metrics.requestFinished("fhir_proxy", 201, 0.01);
  control.metrics.errorCode("no_route");
  const res = await call("/metrics");
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("content-type"), METRICS_CONTENT_TYPE);
  const exp = parseExposition(await res.text());
  assert.equal(
    sampleValue(exp, "gateway_requests_total", { pipeline: "fhir_proxy", status: "201" }),
    1,
  );
  assert.equal(sampleValue(exp, "gateway_errors_total", { code: "no_route" }), 1);
  assert.equal(sampleValue(exp, "process_resident_memory_bytes"), 4096);
  assert.equal(exp.types.get("gateway_request_duration_seconds"), "histogram");
});

Deno.test("every response carries X-Request-Id: generated, or a valid incoming one echoed", async () => {
  const { call } = setup();
  const generated = (await call("/healthz")).headers.get("x-request-id") ?? "";
  assert.match(generated, UUID);
  const echoed = await call("/healthz", { headers: { "X-Request-Id": "abc-123.x:y_z" } });
  assert.equal(echoed.headers.get("x-request-id"), "abc-123.x:y_z");
  const tooLong = await call("/healthz", { headers: { "X-Request-Id": "a".repeat(200) } });
  assert.match(tooLong.headers.get("x-request-id") ?? "", UUID);
  const odd = await call("/healthz", { headers: { "X-Request-Id": "a b<script>" } });
  assert.match(odd.headers.get("x-request-id") ?? "", UUID);
  const notFound = await call("/nope", { headers: { "X-Request-Id": "trace-1" } });
  assert.equal(notFound.headers.get("x-request-id"), "trace-1");
  assert.equal((await errorOf(notFound)).request_id, "trace-1");
});

Deno.test("unknown routes answer 404 JSON", async () => {
  const { call } = setup();
  for (const path of ["/", "/nope", "/admin", "/admin/", "/admin/nope", "/info", "/other/info"]) {
    const res = await call(path);
    assert.equal(res.status, 404, path);
    const err = await errorOf(res);
    assert.equal(err.code, "not_found");
    assert.ok(err.message.includes(path), err.message);
  }
});

Deno.test("the internal routing marker cannot be used to skip the prefix", async () => {
  const { call } = setup();
  for (const path of ["/~prefixed/info", "/~prefixed/routes", "/~prefixed"]) {
    const res = await call(path);
    assert.equal(res.status, 404, path);
    assert.equal((await errorOf(res)).code, "not_found");
  }
});

Deno.test("a wrong method answers 405 JSON with Allow", async () => {
  const { call } = setup();
  const cases: [string, string, string][] = [
    ["POST", "/healthz", "GET, HEAD"],
    ["DELETE", "/admin/info", "GET, HEAD"],
    ["GET", "/api/reload", "POST"],
    ["PUT", "/admin/token", "POST"],
    ["GET", "/admin/authorize", "POST"],
  ];
  for (const [method, path, allow] of cases) {
    const res = await call(path, { method });
    assert.equal(res.status, 405, `${method} ${path}`);
    assert.equal(res.headers.get("allow"), allow);
    const err = await errorOf(res);
    assert.equal(err.code, "method_not_allowed");
  }
});

Deno.test("HEAD works on GET routes", async () => {
  const { call } = setup();
  const res = await call("/admin/info", { method: "HEAD" });
  assert.equal(res.status, 200);
  assert.equal(await res.text(), "");
  assert.ok(res.headers.get("x-request-id"));
});

Deno.test("request bodies over the limit answer 413 JSON", async () => {
  const { call } = setup();
  const big = "x".repeat(MAX_BODY_BYTES + 1);
  // Declared length (what Deno.serve passes on) and a streamed body without one.
  const declared = await call("/admin/token", {
    method: "POST",
    body: big,
    headers: { "content-length": String(big.length) },
  });
  assert.equal(declared.status, 413);
  assert.equal((await errorOf(declared)).code, "payload_too_large");
  const stream = new Blob([big]).stream();
  const streamed = await call("/api/reload", { method: "POST", body: stream });
  assert.equal(streamed.status, 413);
  assert.equal((await errorOf(streamed)).code, "payload_too_large");
});

Deno.test("a body within the limit is accepted", async () => {
  const { call, state } = setup();
  const res = await call("/api/reload", { method: "POST", body: "x".repeat(MAX_BODY_BYTES) });
  assert.equal(res.status, 200);
  assert.deepEqual(state.reloads, ["api"]);
});

Deno.test("a thrown error answers 500 JSON, is logged, and the app keeps serving", async () => {
  const { call, state, lines } = setup();
  state.routesError = new Error("route table exploded");
  const res = await call("/admin/routes", { headers: { "X-Request-Id": "req-500" } });
  assert.equal(res.status, 500);
  const err = await errorOf(res);
  assert.equal(err.code, "internal_error");
  assert.ok(!err.message.includes("exploded"), "internals stay in the log");
  const logged = lines.find((l) => l.msg === "management request failed");
  assert.ok(logged, "error logged");
  assert.equal(logged.request_id, "req-500");
  assert.equal(logged.error, "route table exploded");
  state.routesError = undefined;
  assert.equal((await call("/admin/routes")).status, 200);
});

Deno.test("a thrown non-Error value also answers 500 JSON", async () => {
  const { call, state } = setup();
  state.routesError = "plain string";
  const res = await call("/admin/routes");
  assert.equal(res.status, 500);
  assert.equal((await errorOf(res)).code, "internal_error");
});

Deno.test("a failing config() gives 404 under the prefix, never a crash", async () => {
  const { call, control } = setup();
  control.config = () => {
    throw new Error("no config");
  };
  assert.equal((await call("/admin/info")).status, 404);
  assert.equal((await call("/healthz")).status, 200);
});

Deno.test("access log: one line per request, without headers", async () => {
  const { call, lines } = setup();
  await call("/admin/token", {
    method: "POST",
    headers: { "X-Request-Id": "log-1" },
    body: JSON.stringify({ machine_token: "very-secret-value" }),
  });
  await call("/admin/info", { headers: { Authorization: "Bearer very-secret-value" } });
  const access = lines.filter((l) => l.msg === "management request");
  assert.equal(access.length, 2);
  assert.equal(access[1].status, 401, "a wrong token is logged as such, without the token");
  assert.equal(access[0].level, "info");
  assert.equal(access[0].method, "POST");
  assert.equal(access[0].path, "/admin/token");
  assert.equal(access[0].status, 403);
  assert.equal(access[0].request_id, "log-1");
  assert.ok(!JSON.stringify(lines).includes("very-secret-value"), "no secret in any log line");
  await call("/healthz");
  assert.equal(lines.filter((l) => l.msg === "management request").at(-1)?.level, "debug");
});
