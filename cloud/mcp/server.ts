/** The MCP server of the cloud: one McpServer per session, with every tool registered. */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { Services } from "../services.ts";
import { addContextFeatures } from "./context_features.ts";
import { addCrudTools } from "./crud_tools.ts";
import { addGatewayTools } from "./gateway_tools.ts";
import { addPipelineTools } from "./pipeline_tools.ts";
import { addShareTools } from "./share_tools.ts";
import { ResourceSubscriptions } from "./subscriptions.ts";
import { addTransformTools } from "./transform_tools.ts";
import { addVersionTools } from "./version_tools.ts";

/** Name and version announced in `initialize`. */
export const SERVER_INFO = { name: "gateway-cloud", version: "1.0.0" };

const INSTRUCTIONS =
  "Manage gateways, pipelines, endpoints, backends, middleware, transforms, services, networks and shares of your current team. Typical build: list-gateways/create-gateway, list-services/create-service, create-endpoint and create-backend, create-pipeline (gateway_id) and attach-endpoint/attach-backend, create-transform + create-middleware + attach-middleware, then generate-pipeline-toml or generate-gateway-toml to review. A gateway rolled back to an earlier configuration version (pin in get-gateway-status, gateway_pin in pipeline results) does not get pipeline changes until resume-gateway-config; list-gateway-config-versions and rollback-gateway-config manage its versions.";

/** A new McpServer with every tool of the cloud. */
export function createMcpServer(s: Services): McpServer {
  const server = new McpServer(SERVER_INFO, {
    capabilities: {
      tools: {},
      resources: { subscribe: true },
      prompts: {},
      completions: {},
      logging: {},
    },
    instructions: INSTRUCTIONS,
  });
  addCrudTools(server, s);
  addPipelineTools(server, s);
  addShareTools(server, s);
  addTransformTools(server, s);
  addGatewayTools(server, s);
  addVersionTools(server, s);
  addContextFeatures(server, s);
  new ResourceSubscriptions(s, server).install();
  return server;
}
