/**
 * What the REST API, the MCP tools and the UI say about each resource kind, in one table: its
 * singular name, what its records are, and the fields a list can be filtered on (exact match).
 * The kinds themselves are RESOURCE_KINDS (store/keys.ts); a kind missing here fails the type check.
 */
import type { ResourceKind } from "../store/mod.ts";

/** The description of one kind. */
export interface KindInfo {
  /** Singular name, for messages, tool names and docs ("gateway", "middleware"). */
  readonly one: string;
  /** What its records are, for tool and page descriptions. */
  readonly what: string;
  /** Record fields a list may be filtered on, by exact value. */
  readonly filters: readonly string[];
}

/** Every kind's description. */
export const KINDS: Readonly<Record<ResourceKind, KindInfo>> = {
  gateways: {
    one: "gateway",
    what: "gateway instances (code, status, last seen, configuration version)",
    filters: [],
  },
  services: {
    one: "service",
    what: "services: protocol definitions listing the endpoint and backend types they allow",
    filters: [],
  },
  endpoints: {
    one: "endpoint",
    what: "endpoints: ingress definitions (a service type and its options)",
    filters: ["service_id", "type"],
  },
  backends: {
    one: "backend",
    what: "backends: egress definitions (a service type, options and targets)",
    filters: ["service_id", "type"],
  },
  middleware: {
    one: "middleware",
    what: "middleware: processing steps of pipelines (e.g. transform with a JOLT transform)",
    filters: ["transform_id", "type"],
  },
  transforms: {
    one: "transform",
    what: "transforms: JOLT specs used by transform middleware",
    filters: [],
  },
  pipelines: {
    one: "pipeline",
    what: "pipelines: endpoints -> ordered middleware -> backends, placed on a gateway",
    filters: ["gateway_id"],
  },
  networks: {
    one: "network",
    what: "networks: listeners (bind, port, TLS), optional HTTP/3 and tunnel settings",
    filters: [],
  },
};

/** Singular names of the kinds. */
export const SINGULAR: Readonly<Record<ResourceKind, string>> = Object.fromEntries(
  Object.entries(KINDS).map(([kind, info]) => [kind, info.one]),
) as Record<ResourceKind, string>;
