/**
 * Descriptions of the record fields, for the tools' input schemas. The `type` and `options` of
 * endpoints, backends and middleware are described from the gateway's configuration registry:
 * every type, and each type's option keys with their types, required keys and allowed values.
 */
import type { z } from "zod";
import {
  type ComponentKind,
  componentNames,
  componentTypes,
  optionJsonSchema,
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

/** The component kind of each resource kind that has a `type` and `options`. */
const COMPONENTS: Record<string, ComponentKind> = {
  endpoints: "endpoint",
  backends: "backend",
  middleware: "middleware",
};

/** Option keys the cloud sets from another field. */
const MANAGED: Record<string, string[]> = { middleware: ["spec_path"] };

/** `type` means something else for each kind that has one. */
function typeText(kind: string): string | undefined {
  const names = COMPONENTS[kind] ? componentNames(COMPONENTS[kind]).join(", ") : "";
  switch (kind) {
    case "endpoints":
      return `Endpoint service type, one of the service's endpoint_types: ${names}.`;
    case "backends":
      return `Backend service type, one of the service's backend_types: ${names}.`;
    case "middleware":
      return `Middleware type: ${names}. transform and metadata_transform run the JOLT transform of transform_id; the others are security and traffic middleware configured by options alone.`;
  }
  return undefined;
}

/** One option key in a line: `key (type, required, one of a|b)`. */
function keyText(key: string, s: Record<string, unknown>, required: boolean): string {
  const items = s.items as Record<string, unknown> | undefined;
  const values = (s.enum ?? items?.enum) as unknown[] | undefined;
  const notes = [
    String(s.type ?? "any") + (s.type === "array" && items?.type ? ` of ${items.type}` : ""),
    required ? "required" : "",
    values ? `${s.type === "array" ? "any of" : "one of"} ${values.join("|")}` : "",
    /A credential/.test(String(s.description ?? "")) ? "credential: ${VAR} only" : "",
  ].filter(Boolean);
  return `${key} (${notes.join(", ")})`;
}

/** `options` of a kind: the keys of each of its types, from the registry. */
function optionsText(kind: string): string {
  const component = COMPONENTS[kind];
  const head =
    "Options of the type as in the gateway's TOML (the gateway-config reference resource has every key's meaning and default).";
  if (!component) return head;
  const omit = MANAGED[kind] ?? [];
  const types = componentTypes(component).map((type) => {
    const schema = optionJsonSchema(component, type.name, omit)!;
    const props = schema.properties as Record<string, Record<string, unknown>> | undefined;
    if (!props) return `${type.name}: any table`;
    const required = new Set(schema.required as string[]);
    const keys = Object.entries(props).map(([k, s]) => keyText(k, s, required.has(k)));
    return `${type.name}: ${keys.length ? keys.join("; ") : "none"}`;
  });
  const managed = omit.length
    ? ` Never ${omit.join(", ")} (the cloud writes it from transform_id).`
    : "";
  return `${head} Keys by type — ${types.join(". ")}.${managed}`;
}

/** `shape` with a description on every field; `kind` picks the meaning of `type`. */
export function described(
  shape: Record<string, z.ZodType>,
  kind?: string,
): Record<string, z.ZodType> {
  const text = (k: string) =>
    (k === "type" && kind ? typeText(kind) : undefined) ??
      (k === "options" ? optionsText(kind ?? "") : undefined) ?? FIELDS[k] ??
      k.replaceAll("_", " ");
  return Object.fromEntries(Object.entries(shape).map(([k, v]) => [k, v.describe(text(k))]));
}
