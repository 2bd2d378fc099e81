import assert from "node:assert/strict";
import { cloudOf, infoRows, pipelineRows, renderRoutes, routeRows } from "./gateway_views.ts";

const INFO = {
  name: "gateway",
  version: "0.1.0",
  pid: 10012,
  platform: { os: "linux", arch: "x86_64", deno: "2.9.5" },
  started_at: "2026-11-22T04:09:26.729Z",
  uptime_seconds: 90,
  config_file: null,
  config_generation: 3,
  cloud_enabled: false,
  listeners: [
    {
      network: "main",
      bind: "0.0.0.0",
      port: 8080,
      tls: false,
      http3: { bind: "0.0.0.0", port: 8443 },
    },
    { network: "secure", bind: "127.0.0.1", port: 8443, tls: true, http3: null },
  ],
  management: { bind: "127.0.0.1", port: 9090, prefix: "admin" },
};

Deno.test("views: info rows, with the older cloud_enabled flag and with the cloud object", () => {
  const rows = Object.fromEntries(infoRows(INFO, "'edge' (abc123)"));
  assert.equal(rows.Instance, "'edge' (abc123)");
  assert.equal(rows.Platform, "linux x86_64, Deno 2.9.5");
  assert.equal(rows.Started, "2026-11-22T04:09:26.729Z (up 1m 30s)");
  assert.equal(rows["Config file"], "(embedded default)");
  assert.equal(rows.Cloud, "disabled");
  assert.equal(
    rows.Listeners,
    "main: 0.0.0.0:8080, HTTP/3 on 0.0.0.0:8443\nsecure: 127.0.0.1:8443 (TLS)",
  );
  assert.equal(rows.Management, "127.0.0.1:9090, prefix admin");
  const cloud = {
    enabled: true,
    url: "https://c.example",
    gateway_code: "edge-1",
    gateway_id: "g-1",
    authorized: true,
    verified: true,
    token_source: "management_api",
    token_expires_at: "2026-12-22T00:00:00.000Z",
    persisted: false,
    sync: {
      state: "running",
      config_version: 4,
      last_pull_at: "2026-11-22T00:00:00.000Z",
      last_error: { at: "2026-11-22T00:01:00.000Z", message: "cloud unreachable" },
    },
  };
  const withCloud = infoRows({ ...INFO, cloud }, "x");
  assert.deepEqual(withCloud.slice(withCloud.findIndex(([k]) => k === "Cloud"), -2), [
    ["Cloud", "enabled, https://c.example"],
    ["Gateway code", "edge-1"],
    ["Gateway id", "g-1"],
    [
      "Machine token",
      "held, expires 2026-12-22T00:00:00.000Z, in memory only, from management_api",
    ],
    ["Sync", "running, config version 4, last pull 2026-11-22T00:00:00.000Z"],
    ["Last cloud error", "2026-11-22T00:01:00.000Z: cloud unreachable"],
  ]);
  const unauthorized = Object.fromEntries(
    infoRows({ cloud: { enabled: true, url: null, authorized: false } }, "x"),
  );
  assert.equal(unauthorized.Cloud, "enabled");
  assert.equal(unauthorized["Machine token"], "none (run gwcli gateway:authorize)");
  assert.equal(Object.fromEntries(infoRows({ cloud_enabled: true }, "x")).Cloud, "enabled");
  assert.equal(cloudOf({ cloud_enabled: true }).enabled, true);
  assert.equal(
    cloudOf({ cloud_enabled: true, cloud: { enabled: false } }).enabled,
    false,
    "the object wins",
  );
  assert.equal(Object.fromEntries(infoRows({}, "x")).Version, "-", "missing fields are dashes");
});

Deno.test("views: pipelines and routes", () => {
  const pipelines = {
    pipelines: [{
      name: "fhir_proxy",
      endpoints: ["fhir_in"],
      middleware: [{ name: "to_r4", type: "transform" }],
      backends: [
        {
          name: "hapi",
          service: "fhir",
          targets: [{ name: "hapi1", url: "http://hapi/fhir", healthy: false }],
        },
        { name: "audit", service: "echo", targets: [] },
      ],
    }],
  };
  assert.deepEqual(pipelineRows(pipelines), [[
    "fhir_proxy",
    "fhir_in",
    "to_r4 [transform]",
    "hapi [fhir]\n  hapi1 http://hapi/fhir (unhealthy)\naudit [echo]",
  ]]);
  const routes = {
    routes: [
      {
        path: "/fhir",
        methods: ["*"],
        endpoint: "fhir_in",
        service: "fhir",
        pipeline: "fhir_proxy",
        networks: ["main"],
      },
      {
        path: "dimse://0.0.0.0:11112",
        methods: ["C-ECHO", "C-FIND"],
        endpoint: "scp",
        service: "dicom_scp",
        pipeline: "p",
        networks: [],
      },
    ],
  };
  assert.deepEqual(routeRows(routes)[1], [
    "dimse://0.0.0.0:11112",
    "C-ECHO, C-FIND",
    "scp",
    "dicom_scp",
    "p",
    "-",
  ]);
  const table = renderRoutes(routes);
  assert.match(table, /│ PATH +│ METHODS +│ ENDPOINT +│ SERVICE +│ PIPELINE +│ NETWORKS │/);
  assert.match(table, /│ \/fhir +│ \* +│ fhir_in +│ fhir +│ fhir_proxy +│ main +│/);
});
