/** Descriptions of the record fields, for the tools' input schemas. */
import type { z } from "zod";
import {
  BACKEND_SERVICES,
  ENDPOINT_SERVICES,
  MIDDLEWARE_OPTION_SCHEMAS,
} from "../../shared/gateway_config/mod.ts";

const FIELDS: Record<string, string> = {
  code:
    "Gateway code: how the gateway identifies itself (1-64 letters, digits, `.`, `_`, `-`); unique in the team, never changes.",
  name:
    "Name, unique per kind in the team: letters, digits, `_`, `-` (it becomes a TOML table name). Gateways: a display name.",
  description: "Free text for people, up to 2000 characters.",
  endpoint_types:
    'Endpoint service types this service allows, e.g. ["http", "fhir"]. List at least one endpoint or backend type.',
  backend_types: 'Backend service types this service allows, e.g. ["http", "fhir", "echo"].',
  service_id: "Id of a service of your team (list-services) whose types allow `type`.",
  options:
    'Options of the type as in the gateway\'s TOML, e.g. {"path_prefix": "/fhir"} for an http endpoint or {"base_url": "http://fhir:8080"} for an http backend. For transform middleware: apply (left|right|both), fail_on_error, debug; never spec_path (the cloud writes it from transform_id).',
  network_ids: "Networks serving this endpoint (ids from list-networks); empty: every network.",
  targets: "Load-balanced targets: [{name, url}] with http(s) URLs.",
  timeout_secs: "Request timeout in seconds, or null for the gateway default.",
  retries: "Retries 0-10, or null for the default.",
  load_balancing: "Target selection, or null for the default.",
  required: "Whether the pipeline fails when this backend fails, or null for the default.",
  match: "Metadata key/value pairs a request must carry to use this backend, or null.",
  transform_id:
    "Id of a transform (list-transforms); required for transform and metadata_transform middleware, null otherwise.",
  spec:
    'A JOLT chain: an array of {operation, spec} objects, e.g. [{"operation":"shift","spec":{"a":"b"}}].',
  gateway_id: "Id of the gateway running the pipeline (list-gateways), or null for none yet.",
  endpoint_ids: "Ids of the pipeline's endpoints (list-endpoints).",
  middleware_ids: "Ids of the pipeline's middleware in the order applied (list-middleware).",
  backend_ids: "Ids of the pipeline's backends (list-backends).",
  bind: "Listen address, e.g. 0.0.0.0.",
  port: "Listen port 1-65535.",
  tls_cert_path: "Path of the TLS certificate on the gateway host, or null.",
  tls_key_path: "Path of the TLS key on the gateway host, or null.",
  http3: "HTTP/3 listener {bind, port, cert_path, key_path} (null values inherit), or null.",
  tunnel: "Tunnel settings {provider, hostname, credential_env}, or null.",
};

/** `type` means something else for each kind that has one. */
const TYPES: Record<string, string> = {
  endpoints: `Endpoint service type, one of the service's endpoint_types: ${
    ENDPOINT_SERVICES.join(", ")
  }.`,
  backends: `Backend service type, one of the service's backend_types: ${
    BACKEND_SERVICES.join(", ")
  }.`,
  middleware: `Middleware type: ${
    Object.keys(MIDDLEWARE_OPTION_SCHEMAS).join(", ")
  }. transform and metadata_transform run the JOLT transform of transform_id; the others are security and traffic middleware configured by options alone.`,
};

/** `shape` with a description on every field; `kind` picks the meaning of `type`. */
export function described(
  shape: Record<string, z.ZodType>,
  kind?: string,
): Record<string, z.ZodType> {
  const text = (k: string) =>
    (k === "type" && kind ? TYPES[kind] : undefined) ?? FIELDS[k] ?? k.replaceAll("_", " ");
  return Object.fromEntries(Object.entries(shape).map(([k, v]) => [k, v.describe(text(k))]));
}
