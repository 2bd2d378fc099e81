/** `GET /{prefix}/routes` lists the MLLP listeners of hl7 endpoints after the HTTP routes. */
import assert from "node:assert/strict";
import type { EndpointConfig } from "../../shared/gateway_config/types.ts";
import { mllpRoutes } from "./mod.ts";
import { allRoutes } from "./dimse_routes.ts";
import { testConfig } from "../../tests/support/management.ts";

function hl7(name: string, options: Record<string, unknown>): EndpointConfig {
  return {
    name,
    service: "hl7",
    networks: [],
    options: {
      bind_addr: "0.0.0.0",
      port: 2575,
      max_message_bytes: 1_048_576,
      idle_timeout_secs: 300,
      max_connections: 100,
      ack_mode: "message",
      ...options,
    },
  } as EndpointConfig;
}

Deno.test("hl7 endpoints of pipelines become mllp:// routes with their limits and ACK policy", () => {
  const config = testConfig();
  config.endpoints = {
    ...config.endpoints,
    adt: hl7("adt", {
      tls_cert_path: "c.pem",
      tls_key_path: "k.pem",
      tls_client_ca_path: "ca.pem",
      allowed_sending_facilities: ["NORTH"],
    }),
    lab: hl7("lab", { bind_addr: "::1", port: 6661, ack_mode: "original" }),
    unused: hl7("unused", { port: 7000 }),
  };
  config.pipelines = {
    adt: { name: "adt", endpoints: ["adt"], middleware: [], backends: [] },
    lab: { name: "lab", endpoints: ["lab"], middleware: [], backends: [] },
  };
  const routes = mllpRoutes(config);
  assert.deepEqual(routes.map((r) => [r.path, r.endpoint, r.pipeline]), [
    ["mllp://[::1]:6661", "lab", "lab"],
    ["mllps://0.0.0.0:2575", "adt", "adt"],
  ]);
  assert.deepEqual(routes[1].mllp, {
    bind: "0.0.0.0",
    port: 2575,
    tls: true,
    client_certificates: true,
    ack_mode: "message",
    max_message_bytes: 1_048_576,
    idle_timeout_secs: 300,
    max_connections: 100,
    allowed_sending_facilities: ["NORTH"],
  });
  assert.deepEqual(
    [routes[0].networks, routes[0].served_by, routes[0].workers, routes[0].mllp?.tls],
    [[], "main_thread", 1, false],
  );
  // After the HTTP routes (and any DIMSE listener), each endpoint once.
  const all = allRoutes([], config);
  assert.deepEqual(all.map((r) => r.endpoint), ["lab", "adt"]);
});
