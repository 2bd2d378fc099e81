/**
 * Example bodies and records of every resource kind, used by the OpenAPI document and
 * docs/cloud-api.md. A test creates them in order against a running service (with the ids
 * replaced by the real ones), so the examples are known to be accepted.
 */
import type { ResourceKind } from "../store/mod.ts";

/** Placeholder ids of the examples (the test maps them to the ids the service assigns). */
export const EXAMPLE_IDS = {
  team: "0190f5d2-6a3c-7c1e-9a51-2b7d4c9e8f11",
  gateways: "0190f5e1-2b3c-7d4e-8f5a-6b7c8d9e0f1a",
  services: "0190f5e2-0001-7000-8000-000000000001",
  networks: "0190f5e2-0002-7000-8000-000000000002",
  endpoints: "0190f5e2-0003-7000-8000-000000000003",
  backends: "0190f5e2-0004-7000-8000-000000000004",
  transforms: "0190f5e2-0005-7000-8000-000000000005",
  middleware: "0190f5e2-0006-7000-8000-000000000006",
  pipelines: "0190f5e2-0007-7000-8000-000000000007",
} as const;

/** Kinds in an order where every example only references kinds before it. */
export const EXAMPLE_ORDER: ResourceKind[] = [
  "gateways",
  "services",
  "networks",
  "endpoints",
  "backends",
  "transforms",
  "middleware",
  "pipelines",
];

/** Create bodies. */
export const CREATE_EXAMPLES: Record<ResourceKind, Record<string, unknown>> = {
  gateways: { code: "edge-berlin-1", name: "Berlin edge", description: "Radiology edge gateway" },
  services: {
    name: "fhir",
    description: "FHIR R4 traffic",
    endpoint_types: ["fhir", "http"],
    backend_types: ["fhir", "http"],
  },
  networks: {
    name: "public",
    description: "TLS listener with HTTP/3",
    bind: "0.0.0.0",
    port: 8443,
    tls_cert_path: "certs/gateway.pem",
    tls_key_path: "certs/gateway-key.pem",
    http3: { bind: null, port: null, cert_path: null, key_path: null },
    tunnel: {
      provider: "cloudflare",
      hostname: "fhir.example.org",
      credential_env: "TUNNEL_TOKEN",
    },
  },
  endpoints: {
    name: "fhir_in",
    description: "FHIR API for the EHR",
    service_id: EXAMPLE_IDS.services,
    type: "fhir",
    options: { path_prefix: "/fhir" },
    network_ids: [EXAMPLE_IDS.networks],
  },
  backends: {
    name: "fhir_server",
    description: "Two FHIR servers, round robin",
    service_id: EXAMPLE_IDS.services,
    type: "fhir",
    options: {},
    targets: [
      { name: "a", url: "http://10.0.0.5:8080/fhir" },
      { name: "b", url: "http://10.0.0.6:8080/fhir" },
    ],
    timeout_secs: 10,
    load_balancing: "round_robin",
  },
  transforms: {
    name: "patient_to_fhir",
    description: "Legacy patient JSON to a FHIR Patient",
    spec: [
      {
        operation: "shift",
        spec: { id: "id", name: { first: "name[0].given[0]", last: "name[0].family" } },
      },
      { operation: "default", spec: { resourceType: "Patient" } },
    ],
  },
  middleware: {
    name: "to_fhir",
    description: "Reshape requests",
    type: "transform",
    transform_id: EXAMPLE_IDS.transforms,
    options: { apply: "left", fail_on_error: true },
  },
  pipelines: {
    name: "fhir_ingest",
    description: "EHR to FHIR servers",
    gateway_id: EXAMPLE_IDS.gateways,
    endpoint_ids: [EXAMPLE_IDS.endpoints],
    middleware_ids: [EXAMPLE_IDS.middleware],
    backend_ids: [EXAMPLE_IDS.backends],
  },
};

/** Update (PATCH) bodies. */
export const UPDATE_EXAMPLES: Record<ResourceKind, Record<string, unknown>> = {
  gateways: { name: "Berlin edge (primary)" },
  services: { description: "FHIR R4 and plain HTTP traffic" },
  networks: { port: 9443 },
  endpoints: { options: { path_prefix: "/fhir/r4" } },
  backends: { timeout_secs: 20, retries: 2 },
  transforms: { description: "Patient to FHIR (v2)" },
  middleware: { options: { apply: "both", fail_on_error: false } },
  pipelines: { middleware_ids: [] },
};

const BOOKKEEPING = {
  team_id: EXAMPLE_IDS.team,
  created_at: "2025-01-15T10:00:00.000Z",
  updated_at: "2025-01-15T10:00:00.000Z",
  created_by: "ada@example.com",
  revision: 1,
};

/** A stored record of `kind`, as the API answers it. */
export function recordExample(kind: ResourceKind): Record<string, unknown> {
  const body = CREATE_EXAMPLES[kind];
  const base = { id: EXAMPLE_IDS[kind], ...body, ...BOOKKEEPING };
  switch (kind) {
    case "gateways":
      return {
        ...base,
        status: "online",
        last_seen_at: "2025-01-16T08:01:00.000Z",
        config_version: 3,
        applied_version: 3,
        last_apply: {
          version: 3,
          status: "applied",
          errors: [],
          reported_at: "2025-01-16T08:00:05.000Z",
        },
        last_status: null,
        reported_config: null,
      };
    case "backends":
      return { retries: null, required: null, match: null, ...base };
    case "transforms":
      return { ...base, sha256: "3b1f9c0e…" };
    default:
      return base;
  }
}
