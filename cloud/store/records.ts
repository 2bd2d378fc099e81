/** The resource records of a team (fields of every kind) and what the repository knows of each. */
import type {
  BackendService,
  EndpointService,
  LoadBalancing,
} from "../../shared/gateway_config/mod.ts";
import type { BaseRecord, KindSpec, Ref } from "./repo.ts";
import type { ResourceKind } from "./keys.ts";

/** A gateway instance; `code` is unique per team. */
export interface GatewayRecord extends BaseRecord {
  code: string;
  description: string;
}

/** A protocol definition: which endpoint and backend service types it allows. */
export interface ServiceRecord extends BaseRecord {
  description: string;
  endpoint_types: EndpointService[];
  backend_types: BackendService[];
}

/** An ingress definition. */
export interface EndpointRecord extends BaseRecord {
  description: string;
  service_id: string;
  type: EndpointService;
  options: Record<string, unknown>;
  /** Networks serving it; empty: every network of the gateway. */
  network_ids: string[];
}

/** One target of a backend. */
export interface BackendTarget {
  name: string;
  url: string;
}

/** An egress definition. */
export interface BackendRecord extends BaseRecord {
  description: string;
  service_id: string;
  type: BackendService;
  options: Record<string, unknown>;
  targets: BackendTarget[];
  timeout_secs: number | null;
  retries: number | null;
  load_balancing: LoadBalancing | null;
  required: boolean | null;
  match: Record<string, string> | null;
}

/** A processing step; transform types point at a transform. */
export interface MiddlewareRecord extends BaseRecord {
  description: string;
  type: string;
  transform_id: string | null;
  options: Record<string, unknown>;
}

/** A JOLT spec. */
export interface TransformRecord extends BaseRecord {
  description: string;
  spec: unknown[];
  /** SHA-256 (hex) of the spec's JSON text as the gateway downloads it. */
  sha256: string;
}

/** A traffic flow on a gateway. */
export interface PipelineRecord extends BaseRecord {
  description: string;
  gateway_id: string | null;
  endpoint_ids: string[];
  middleware_ids: string[];
  backend_ids: string[];
}

/** HTTP/3 settings of a network. */
export interface Http3Settings {
  bind: string | null;
  port: number | null;
  cert_path: string | null;
  key_path: string | null;
}

/** Tunnel settings of a network (kept by the cloud; not part of the gateway file). */
export interface TunnelSettings {
  provider: "cloudflare" | "ngrok" | "tailscale" | "custom";
  hostname: string | null;
  /** Name of the environment variable on the gateway host that holds the tunnel credential. */
  credential_env: string | null;
}

/** A listener of the gateway. */
export interface NetworkRecord extends BaseRecord {
  description: string;
  bind: string;
  port: number;
  tls_cert_path: string | null;
  tls_key_path: string | null;
  http3: Http3Settings | null;
  tunnel: TunnelSettings | null;
}

/** The record type of each kind. */
export interface RecordOf {
  gateways: GatewayRecord;
  services: ServiceRecord;
  endpoints: EndpointRecord;
  backends: BackendRecord;
  middleware: MiddlewareRecord;
  transforms: TransformRecord;
  pipelines: PipelineRecord;
  networks: NetworkRecord;
}

/** Any resource record. */
export type AnyRecord = RecordOf[ResourceKind];

const list = (kind: ResourceKind, field: string, ids: string[]): Ref[] =>
  ids.map((id, i) => ({ kind, id, field: `${field}.${i}` }));

/** Kind specs without cleanup hooks (the store adds those). */
export const KIND_SPECS: { [K in ResourceKind]: KindSpec<RecordOf[K]> } = {
  gateways: { kind: "gateways", singular: "gateway", uniqueField: "code", refs: () => [] },
  services: { kind: "services", singular: "service", uniqueField: "name", refs: () => [] },
  endpoints: {
    kind: "endpoints",
    singular: "endpoint",
    uniqueField: "name",
    refs: (r) => [
      { kind: "services", id: r.service_id, field: "service_id" },
      ...list("networks", "network_ids", r.network_ids),
    ],
  },
  backends: {
    kind: "backends",
    singular: "backend",
    uniqueField: "name",
    refs: (r) => [{ kind: "services", id: r.service_id, field: "service_id" }],
  },
  middleware: {
    kind: "middleware",
    singular: "middleware",
    uniqueField: "name",
    refs: (r) =>
      r.transform_id ? [{ kind: "transforms", id: r.transform_id, field: "transform_id" }] : [],
  },
  transforms: { kind: "transforms", singular: "transform", uniqueField: "name", refs: () => [] },
  pipelines: {
    kind: "pipelines",
    singular: "pipeline",
    uniqueField: "name",
    refs: (r) => [
      ...(r.gateway_id
        ? [{ kind: "gateways" as const, id: r.gateway_id, field: "gateway_id" }]
        : []),
      ...list("endpoints", "endpoint_ids", r.endpoint_ids),
      ...list("middleware", "middleware_ids", r.middleware_ids),
      ...list("backends", "backend_ids", r.backend_ids),
    ],
  },
  networks: { kind: "networks", singular: "network", uniqueField: "name", refs: () => [] },
};
