/**
 * Request bodies of the resource API (zod): what a caller sends to create or update each kind.
 * The same schemas describe the bodies in the OpenAPI document (via `z.toJSONSchema`).
 */
import { z } from "zod";
import {
  BACKEND_SERVICES,
  componentNames,
  componentType,
  ENDPOINT_SERVICES,
  LOAD_BALANCING,
} from "../../shared/gateway_config/mod.ts";
import { GATEWAY_CODE_PATTERN } from "../../shared/mod.ts";
import { RESOURCE_KINDS, type ResourceKind } from "../store/mod.ts";

/** Names become TOML table names in the gateway file: letters, digits, `_`, `-`. */
export const NAME = z.string()
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9_-]*$/,
    "use letters, digits, `_` and `-`, starting with a letter or digit",
  )
  .max(64, "at most 64 characters");

const id = z.uuid("must be a UUID");
const description = z.string().max(2000, "at most 2000 characters");
const options = z.record(z.string(), z.unknown());
const ids = (max: number) => z.array(id).max(max, `at most ${max} entries`);

/** `POST /api/gateways`. */
export const gatewayCreate = z.strictObject({
  code: z.string().regex(
    GATEWAY_CODE_PATTERN,
    "1-64 letters, digits, `.`, `_` or `-`, starting with a letter or digit",
  ),
  name: z.string().min(1).max(200).optional(),
  description: description.default(""),
});

/** `PATCH /api/gateways/{id}` (the code never changes: it is how the gateway identifies itself). */
export const gatewayUpdate = z.strictObject({
  name: z.string().min(1).max(200).optional(),
  description: description.optional(),
});

const serviceFields = {
  name: NAME,
  description: description.default(""),
  endpoint_types: z.array(z.enum(ENDPOINT_SERVICES)).max(ENDPOINT_SERVICES.length).default([]),
  backend_types: z.array(z.enum(BACKEND_SERVICES)).max(BACKEND_SERVICES.length).default([]),
};

/** `POST /api/services`. */
export const serviceCreate = z.strictObject(serviceFields).refine(
  (s) => s.endpoint_types.length + s.backend_types.length > 0,
  { message: "list at least one endpoint or backend type", path: ["endpoint_types"] },
);

/** `PATCH /api/services/{id}`. */
export const serviceUpdate = z.strictObject({
  name: NAME.optional(),
  description: description.optional(),
  endpoint_types: serviceFields.endpoint_types.unwrap().optional(),
  backend_types: serviceFields.backend_types.unwrap().optional(),
});

/** `POST /api/endpoints`. */
export const endpointCreate = z.strictObject({
  name: NAME,
  description: description.default(""),
  service_id: id,
  type: z.enum(ENDPOINT_SERVICES),
  options: options.default({}),
  network_ids: ids(10).default([]),
});

/** `PATCH /api/endpoints/{id}`. */
export const endpointUpdate = z.strictObject({
  name: NAME.optional(),
  description: description.optional(),
  service_id: id.optional(),
  type: z.enum(ENDPOINT_SERVICES).optional(),
  options: options.optional(),
  network_ids: ids(10).optional(),
});

const target = z.strictObject({
  name: NAME,
  url: z.url({ protocol: /^https?$/, error: "must be an http:// or https:// URL" }),
});
const backendSettings = {
  timeout_secs: z.number().positive().nullable(),
  retries: z.int().min(0).max(10).nullable(),
  load_balancing: z.enum(LOAD_BALANCING).nullable(),
  required: z.boolean().nullable(),
  match: z.record(z.string(), z.string()).nullable(),
};

/** `POST /api/backends`. */
export const backendCreate = z.strictObject({
  name: NAME,
  description: description.default(""),
  service_id: id,
  type: z.enum(BACKEND_SERVICES),
  options: options.default({}),
  targets: z.array(target).max(20).default([]),
  timeout_secs: backendSettings.timeout_secs.default(null),
  retries: backendSettings.retries.default(null),
  load_balancing: backendSettings.load_balancing.default(null),
  required: backendSettings.required.default(null),
  match: backendSettings.match.default(null),
});

/** `PATCH /api/backends/{id}`. */
export const backendUpdate = z.strictObject({
  name: NAME.optional(),
  description: description.optional(),
  service_id: id.optional(),
  type: z.enum(BACKEND_SERVICES).optional(),
  options: options.optional(),
  targets: z.array(target).max(20).optional(),
  timeout_secs: backendSettings.timeout_secs.optional(),
  retries: backendSettings.retries.optional(),
  load_balancing: backendSettings.load_balancing.optional(),
  required: backendSettings.required.optional(),
  match: backendSettings.match.optional(),
});

/** A middleware type of the configuration registry (built in, or registered in this process). */
const middlewareType = z.string().superRefine((t, ctx) => {
  if (componentType("middleware", t)) return;
  ctx.addIssue({
    code: "custom",
    message: `must be one of: ${componentNames("middleware").join(", ")}`,
  });
});

/** `POST /api/middleware`. */
export const middlewareCreate = z.strictObject({
  name: NAME,
  description: description.default(""),
  type: middlewareType,
  transform_id: id.nullable().default(null),
  options: options.default({}),
});

/** `PATCH /api/middleware/{id}`. */
export const middlewareUpdate = z.strictObject({
  name: NAME.optional(),
  description: description.optional(),
  type: middlewareType.optional(),
  transform_id: id.nullable().optional(),
  options: options.optional(),
});

/** `POST /api/transforms`. */
export const transformCreate = z.strictObject({
  name: NAME,
  description: description.default(""),
  spec: z.array(z.unknown()).min(1, "a chain spec needs at least one operation"),
});

/** `PATCH /api/transforms/{id}`. */
export const transformUpdate = z.strictObject({
  name: NAME.optional(),
  description: description.optional(),
  spec: transformCreate.shape.spec.optional(),
});

/** `POST /api/transforms/preview`: run a spec on a sample without storing anything. */
export const transformPreview = z.strictObject({
  spec: z.array(z.unknown()),
  input: z.unknown(),
});

/** `POST /api/pipelines`. */
export const pipelineCreate = z.strictObject({
  name: NAME,
  description: description.default(""),
  gateway_id: id.nullable().default(null),
  endpoint_ids: ids(20).default([]),
  middleware_ids: ids(30).default([]),
  backend_ids: ids(20).default([]),
});

/** `PATCH /api/pipelines/{id}`. */
export const pipelineUpdate = z.strictObject({
  name: NAME.optional(),
  description: description.optional(),
  gateway_id: id.nullable().optional(),
  endpoint_ids: ids(20).optional(),
  middleware_ids: ids(30).optional(),
  backend_ids: ids(20).optional(),
});

const port = z.int().min(1).max(65535);
const path = z.string().min(1).max(1024);
const http3 = z.strictObject({
  bind: z.string().min(1).nullable().default(null),
  port: port.nullable().default(null),
  cert_path: path.nullable().default(null),
  key_path: path.nullable().default(null),
});
const tunnel = z.strictObject({
  provider: z.enum(["cloudflare", "ngrok", "tailscale", "custom"]),
  hostname: z.string().min(1).max(253).nullable().default(null),
  credential_env: z.string().regex(
    /^[A-Z_][A-Z0-9_]*$/,
    "an environment variable name (A-Z, 0-9, _)",
  )
    .nullable().default(null),
});

/** `POST /api/networks`. */
export const networkCreate = z.strictObject({
  name: NAME,
  description: description.default(""),
  bind: z.string().min(1).max(255).default("0.0.0.0"),
  port: port.default(8080),
  tls_cert_path: path.nullable().default(null),
  tls_key_path: path.nullable().default(null),
  http3: http3.nullable().default(null),
  tunnel: tunnel.nullable().default(null),
});

/** `PATCH /api/networks/{id}`. */
export const networkUpdate = z.strictObject({
  name: NAME.optional(),
  description: description.optional(),
  bind: z.string().min(1).max(255).optional(),
  port: port.optional(),
  tls_cert_path: path.nullable().optional(),
  tls_key_path: path.nullable().optional(),
  http3: http3.nullable().optional(),
  tunnel: tunnel.nullable().optional(),
});

/** `POST /api/shares` (and the MCP share-resource tool). */
export const shareCreate = z.strictObject({
  resource_kind: z.enum(RESOURCE_KINDS),
  resource_id: id,
  team_id: id,
  access: z.enum(["read", "write"]),
});

/** A share request, parsed. */
export type ShareCreate = z.infer<typeof shareCreate>;

/** Create and update schemas of each kind. */
export const SCHEMAS: { [K in ResourceKind]: { create: z.ZodType; update: z.ZodType } } = {
  gateways: { create: gatewayCreate, update: gatewayUpdate },
  services: { create: serviceCreate, update: serviceUpdate },
  endpoints: { create: endpointCreate, update: endpointUpdate },
  backends: { create: backendCreate, update: backendUpdate },
  middleware: { create: middlewareCreate, update: middlewareUpdate },
  transforms: { create: transformCreate, update: transformUpdate },
  pipelines: { create: pipelineCreate, update: pipelineUpdate },
  networks: { create: networkCreate, update: networkUpdate },
};
