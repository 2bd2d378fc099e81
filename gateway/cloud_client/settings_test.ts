import assert from "node:assert/strict";
import type { GatewayConfig } from "../../shared/gateway_config/types.ts";
import { testConfig } from "../../tests/support/management.ts";
import { cloudSettings, hostGatewayCode, identityChanged, normalizeCloudUrl } from "./settings.ts";

function withCloud(cloud: GatewayConfig["cloud"]): GatewayConfig {
  return { ...testConfig(), cloud };
}

Deno.test("cloudSettings: URL normalized, defaults applied, relative state_dir resolved", () => {
  const s = cloudSettings(
    withCloud({ enabled: true, url: "https://cloud.example.com/" }),
    "/etc/gw",
  );
  assert.equal(s.enabled, true);
  assert.equal(s.url, "https://cloud.example.com");
  assert.equal(s.stateDir, "/etc/gw/state");
  assert.equal(s.statusIntervalMs, 60_000);
  assert.equal(s.codeConfigured, false);
  assert.equal(s.gatewayCode, hostGatewayCode(Deno.hostname()));
  const set = cloudSettings(
    withCloud({
      enabled: true,
      url: "http://10.0.0.1:8000",
      gateway_code: "edge-1",
      state_dir: "/var/lib/gateway",
      status_interval_secs: 5,
    }),
    "/etc/gw",
  );
  assert.deepEqual(
    [set.gatewayCode, set.codeConfigured, set.stateDir, set.statusIntervalMs],
    ["edge-1", true, "/var/lib/gateway", 5000],
  );
  assert.equal(cloudSettings(withCloud({ enabled: false }), "/x").url, null);
});

Deno.test("hostGatewayCode: a host name becomes a valid gateway code", () => {
  assert.equal(hostGatewayCode("edge-1.example.org"), "edge-1.example.org");
  assert.equal(hostGatewayCode("My Host (2)"), "My-Host--2-");
  assert.equal(hostGatewayCode("-x"), "x");
  assert.equal(hostGatewayCode("h".repeat(80)).length, 64);
  assert.equal(hostGatewayCode("!!!"), "gateway");
  assert.equal(normalizeCloudUrl("HTTP://Cloud.Example.com:80/"), "http://cloud.example.com");
});

Deno.test("identityChanged: URL, state dir, code or enablement need a new store; timings do not", () => {
  const base = cloudSettings(withCloud({ enabled: true, url: "https://a.example" }), "/x");
  assert.equal(identityChanged(undefined, base), true);
  assert.equal(identityChanged(base, { ...base, statusIntervalMs: 1000 }), false);
  assert.equal(identityChanged(base, { ...base, url: "https://b.example" }), true);
  assert.equal(identityChanged(base, { ...base, stateDir: "/y" }), true);
  assert.equal(identityChanged(base, { ...base, enabled: false }), true);
});
