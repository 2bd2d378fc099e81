/** `GET /{prefix}/routes` lists the DIMSE listeners of dicom_scp endpoints after the HTTP routes. */
import assert from "node:assert/strict";
import type { EndpointConfig } from "../../shared/gateway_config/types.ts";
import { createManagementApp, dimseRoutes } from "./mod.ts";
import {
  authed,
  fakeControl,
  memoryLogger,
  TEST_GUARD,
  TEST_ROUTES,
  testConfig,
} from "../../tests/support/management.ts";

function scp(name: string, options: Record<string, unknown>): EndpointConfig {
  return {
    name,
    service: "dicom_scp",
    networks: [],
    options: {
      bind_addr: "0.0.0.0",
      port: 11112,
      enable_echo: true,
      enable_find: false,
      enable_move: false,
      enable_get: false,
      enable_store: false,
      ...options,
    },
  } as EndpointConfig;
}

function configWithListeners() {
  const config = testConfig();
  config.endpoints = {
    modalities: scp("modalities", {
      local_aet: "GATEWAY",
      port: 104,
      enable_find: true,
      enable_get: true,
      enable_store: true,
      storage_dir: "data/dicom",
      allowed_calling_aets: ["CT1", "MR2"],
    }),
    local: scp("local", { local_aet: "LOCAL", bind_addr: "::1", enable_echo: false }),
    unused: scp("unused", { local_aet: "UNUSED", port: 2000 }),
  };
  config.pipelines = {
    imaging: {
      name: "imaging",
      endpoints: ["modalities", "fhir_in"],
      middleware: [],
      backends: [],
    },
    loopback: { name: "loopback", endpoints: ["local"], middleware: [], backends: [] },
  };
  return config;
}

Deno.test("dicom_scp endpoints of pipelines become dimse:// routes with their policy", () => {
  assert.deepEqual(dimseRoutes(configWithListeners()), [
    {
      path: "dimse://[::1]:11112",
      methods: [],
      endpoint: "local",
      service: "dicom_scp",
      pipeline: "loopback",
      networks: [],
      served_by: "main_thread",
      workers: 1,
      dimse: {
        bind: "::1",
        port: 11112,
        local_aet: "LOCAL",
        services: [],
        allowed_calling_aets: null,
        storage_dir: null,
      },
    },
    {
      path: "dimse://0.0.0.0:104",
      methods: ["C-ECHO", "C-FIND", "C-GET", "C-STORE"],
      endpoint: "modalities",
      service: "dicom_scp",
      pipeline: "imaging",
      networks: [],
      served_by: "main_thread",
      workers: 1,
      dimse: {
        bind: "0.0.0.0",
        port: 104,
        local_aet: "GATEWAY",
        services: ["echo", "find", "get", "store"],
        allowed_calling_aets: ["CT1", "MR2"],
        storage_dir: "data/dicom",
      },
    },
  ]);
});

Deno.test("GET /admin/routes: HTTP routes first, then DIMSE listeners, each endpoint once", async () => {
  const { control, state } = fakeControl();
  state.config = configWithListeners();
  const app = createManagementApp(control, memoryLogger().logger, TEST_GUARD);
  const res = await app.fetch(authed("http://127.0.0.1:9090/admin/routes"));
  assert.equal(res.status, 200);
  const { routes } = await res.json();
  assert.deepEqual(routes.slice(0, TEST_ROUTES.length), TEST_ROUTES);
  assert.deepEqual(
    routes.map((r: { path: string; endpoint: string }) => [r.endpoint, r.path]),
    [["fhir_in", "/fhir"], ["local", "dimse://[::1]:11112"], ["modalities", "dimse://0.0.0.0:104"]],
  );
  // A runtime that already reports a DIMSE route keeps its entry; no duplicate is added.
  const original = control.routes;
  control.routes = () => [...original(), { ...routes[2], pipeline: "from_runtime" }];
  const again = await (await app.fetch(authed("http://127.0.0.1:9090/admin/routes"))).json();
  assert.deepEqual(
    again.routes.map((r: { endpoint: string; pipeline: string }) => [r.endpoint, r.pipeline]),
    [["fhir_in", "fhir_proxy"], ["modalities", "from_runtime"], ["local", "loopback"]],
  );
});
