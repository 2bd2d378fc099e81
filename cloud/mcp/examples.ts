/**
 * An example call of every tool, in an order where each one works against the records the earlier
 * ones created (a test runs them all against a live service, and docs/mcp.md shows them). Ids
 * are the placeholders of the REST examples; the test replaces them with the real ones.
 */
import { CREATE_EXAMPLES, EXAMPLE_IDS, EXAMPLE_ORDER, UPDATE_EXAMPLES } from "../api/mod.ts";
import type { ResourceKind } from "../store/mod.ts";
import { ONE } from "./crud_tools.ts";

/** Placeholder id of another team (a share's receiver). */
export const OTHER_TEAM_ID = "0190f5d2-6a3c-7c1e-9a51-2b7d4c9e8f22";
/** Placeholder id of a share. */
export const SHARE_ID = "0190f5f0-1111-7222-8333-444455556666";

const ID = EXAMPLE_IDS;
const SPEC = [{ operation: "shift", spec: { id: "identifier", name: "patient.name" } }];

const crud = (
  verb: "get" | "update" | "delete",
  kind: ResourceKind,
): [string, Record<string, unknown>] => [
  `${verb}-${ONE[kind]}`,
  verb === "update" ? { id: ID[kind], ...UPDATE_EXAMPLES[kind] } : { id: ID[kind] },
];

/** [tool, arguments] pairs, in the order they can run. */
export const TOOL_EXAMPLES: [string, Record<string, unknown>][] = [
  ...EXAMPLE_ORDER.map((
    k,
  ): [string, Record<string, unknown>] => [`create-${ONE[k]}`, CREATE_EXAMPLES[k]]),
  ["list-gateways", { name: "edge-berlin" }],
  ["list-services", { limit: 20 }],
  ["list-endpoints", { service_id: ID.services }],
  ["list-backends", { type: "fhir" }],
  ["list-middleware", { transform_id: ID.transforms }],
  ["list-transforms", { name: "patient" }],
  ["list-pipelines", { gateway_id: ID.gateways }],
  ["list-networks", { limit: 10 }],
  ...EXAMPLE_ORDER.map((k) => crud("get", k)),
  ["detach-middleware", { pipeline_id: ID.pipelines, middleware_id: ID.middleware }],
  ["attach-middleware", { pipeline_id: ID.pipelines, middleware_id: ID.middleware, position: 0 }],
  ["detach-endpoint", { pipeline_id: ID.pipelines, endpoint_id: ID.endpoints }],
  ["attach-endpoint", { pipeline_id: ID.pipelines, endpoint_id: ID.endpoints }],
  ["detach-backend", { pipeline_id: ID.pipelines, backend_id: ID.backends }],
  ["attach-backend", { pipeline_id: ID.pipelines, backend_id: ID.backends }],
  ["validate-transform-spec", { spec: SPEC }],
  ["preview-transform", { spec: SPEC, input: { id: "7", name: "Ada" } }],
  [
    "share-resource",
    {
      resource_kind: "transforms",
      resource_id: ID.transforms,
      team_id: OTHER_TEAM_ID,
      access: "read",
    },
  ],
  ["list-shares", { direction: "outgoing" }],
  ["revoke-share", { share_id: SHARE_ID }],
  ["get-gateway-status", { gateway_id: ID.gateways }],
  ["get-gateway-config-versions", { gateway_id: ID.gateways }],
  ["generate-pipeline-toml", { pipeline_id: ID.pipelines }],
  ["generate-gateway-toml", { gateway_id: ID.gateways }],
  ["list-gateway-config-versions", { gateway_id: ID.gateways }],
  ["rollback-gateway-config", { gateway_id: ID.gateways, version: 1 }],
  ["resume-gateway-config", { gateway_id: ID.gateways }],
  ...EXAMPLE_ORDER.map((k) => crud("update", k)),
  ...[...EXAMPLE_ORDER].reverse().map((k) => crud("delete", k)),
];
