import assert from "node:assert/strict";
import { createManagementApp, type InstanceInfo } from "./mod.ts";
import {
  authed,
  fakeControl,
  memoryLogger,
  TEST_GUARD,
  TEST_PIPELINES,
  TEST_ROUTES,
} from "../../tests/support/management.ts";

function setup() {
  const { control, state } = fakeControl();
  const app = createManagementApp(control, memoryLogger().logger, TEST_GUARD);
  const call = (path: string) => app.fetch(authed("http://127.0.0.1:9090" + path));
  return { control, state, call };
}

Deno.test("GET /{prefix}/info describes the instance", async () => {
  const { control, call } = setup();
  const res = await call("/admin/info");
  assert.equal(res.status, 200);
  assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
  const info: InstanceInfo = await res.json();
  assert.equal(info.name, "gateway");
  assert.equal(info.version, "9.9.9-test");
  assert.equal(info.pid, Deno.pid);
  assert.deepEqual(info.platform, {
    os: Deno.build.os,
    arch: Deno.build.arch,
    deno: Deno.version.deno,
  });
  assert.equal(info.started_at, control.startedAt.toISOString());
  assert.ok(info.uptime_seconds >= 90 && info.uptime_seconds < 120, String(info.uptime_seconds));
  assert.ok(Number.isInteger(info.uptime_seconds));
  assert.equal(info.config_file, "/etc/gateway/gateway.toml");
  assert.equal(info.config_generation, 1);
  assert.equal(info.cloud_enabled, false);
  assert.deepEqual(info.listeners, [
    {
      network: "main",
      bind: "0.0.0.0",
      port: 8080,
      tls: false,
      http3: { bind: "0.0.0.0", port: 8443 },
    },
    { network: "secure", bind: "127.0.0.1", port: 8443, tls: true, http3: null },
  ]);
  assert.deepEqual(info.management, { bind: "127.0.0.1", port: 9090, prefix: "admin" });
});

Deno.test("info: embedded default config, cloud enabled, generation after a reload", async () => {
  const { control, state, call } = setup();
  (control as { configFile: string | null }).configFile = null;
  state.config = { ...state.config, cloud: { enabled: true, url: "https://cloud.example" } };
  state.generation = 4;
  const info: InstanceInfo = await (await call("/admin/info")).json();
  assert.equal(info.config_file, null);
  assert.equal(info.cloud_enabled, true);
  assert.equal(info.config_generation, 4);
});

Deno.test("info: config_generation is null when the runtime does not report it", async () => {
  const { control, call } = setup();
  delete control.generation;
  const info: InstanceInfo = await (await call("/admin/info")).json();
  assert.equal(info.config_generation, null);
});

Deno.test("GET /{prefix}/pipelines and /{prefix}/routes wrap the control's lists", async () => {
  const { call } = setup();
  const p = await call("/admin/pipelines");
  assert.equal(p.status, 200);
  assert.deepEqual(await p.json(), { pipelines: TEST_PIPELINES });
  const r = await call("/admin/routes");
  assert.equal(r.status, 200);
  assert.deepEqual(await r.json(), { routes: TEST_ROUTES });
});
