import assert from "node:assert/strict";
import { createManagementApp, type ReloadOutcome } from "./mod.ts";
import {
  authed,
  fakeControl,
  memoryLogger,
  TEST_GUARD,
  testConfig,
} from "../../tests/support/management.ts";

function setup() {
  const { control, state } = fakeControl();
  const app = createManagementApp(control, memoryLogger().logger, TEST_GUARD);
  const call = (path: string, method = "GET") =>
    app.fetch(authed("http://127.0.0.1:9090" + path, { method }));
  return { control, state, call };
}

Deno.test("POST /api/reload answers 200 with the outcome", async () => {
  const { state, call } = setup();
  const res = await call("/api/reload", "POST");
  assert.equal(res.status, 200);
  const outcome: ReloadOutcome = await res.json();
  assert.deepEqual(outcome, { ok: true, generation: 2, duration_ms: 2.25 });
  assert.deepEqual(state.reloads, ["api"]);
});

Deno.test("POST /api/reload answers 422 listing every problem; the old config stays", async () => {
  const { state, call } = setup();
  const problems = [
    { file: "/etc/gateway/gateway.toml", line: 12, path: "backends.api.targets", message: "x" },
    { file: "/etc/gateway/gateway.toml", path: "pipelines.p.endpoints", message: "y" },
  ];
  state.next = { problems };
  const before = state.config;
  const res = await call("/api/reload", "POST");
  assert.equal(res.status, 422);
  const outcome: ReloadOutcome = await res.json();
  assert.equal(outcome.ok, false);
  assert.equal(outcome.generation, 1);
  assert.deepEqual(outcome.errors, problems);
  assert.equal(state.config, before);
  assert.equal((await call("/admin/info")).status, 200);
});

Deno.test("/api/reload is not under the prefix", async () => {
  const { call } = setup();
  assert.equal((await call("/admin/api/reload", "POST")).status, 404);
  assert.equal((await call("/admin/reload", "POST")).status, 404);
});

Deno.test("a reload that changes the prefix moves the routes at once", async () => {
  const { state, call } = setup();
  state.next = { ...testConfig(), management: { ...testConfig().management, prefix: "ops" } };
  assert.equal((await call("/admin/info")).status, 200);
  assert.equal((await call("/api/reload", "POST")).status, 200);
  assert.equal((await call("/admin/info")).status, 404);
  const res = await call("/ops/info");
  assert.equal(res.status, 200);
  assert.equal((await res.json()).management.prefix, "ops");
  assert.equal((await call("/ops/routes")).status, 200);
  assert.equal((await call("/ops/token", "POST")).status, 403);
  // Root routes do not move.
  assert.equal((await call("/healthz")).status, 200);
  assert.equal((await call("/api/reload", "POST")).status, 200);
});

Deno.test("prefixes with slashes, several segments, or empty", async () => {
  const { state, call } = setup();
  const withPrefix = (prefix: string) => {
    const c = testConfig();
    state.config = { ...c, management: { ...c.management, prefix } };
  };
  withPrefix("/admin/");
  assert.equal((await call("/admin/info")).status, 200);
  withPrefix("gw/admin");
  assert.equal((await call("/gw/admin/pipelines")).status, 200);
  assert.equal((await call("/admin/pipelines")).status, 404);
  withPrefix("");
  assert.equal((await call("/info")).status, 200);
  assert.equal((await call("/healthz")).status, 200);
  assert.equal((await call("/metrics")).status, 200);
  withPrefix("api");
  assert.equal((await call("/api/info")).status, 200);
  assert.equal((await call("/api/reload", "POST")).status, 200);
});
