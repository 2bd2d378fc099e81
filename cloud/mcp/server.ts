/** The MCP server of the cloud: one McpServer per session, with every tool registered. */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { Services } from "../services.ts";
import { addContextFeatures } from "./context_features.ts";
import { addCrudTools } from "./crud_tools.ts";
import { addGatewayTools } from "./gateway_tools.ts";
import { addPipelineTools } from "./pipeline_tools.ts";
import { addShareTools } from "./share_tools.ts";
import { addTransformTools } from "./transform_tools.ts";

/** Name and version announced in `initialize`. */
export const SERVER_INFO = { name: "gateway-cloud", version: "1.0.0" };

const INSTRUCTIONS =
  "Manage gateways, pipelines, endpoints, backends, middleware, transforms, services, networks and shares of your current team. Typical build: list-gateways/create-gateway, list-services/create-service, create-endpoint and create-backend, create-pipeline (gateway_id) and attach-endpoint/attach-backend, create-transform + create-middleware + attach-middleware, then generate-pipeline-toml or generate-gateway-toml to review.";

/** A new McpServer with every tool of the cloud. */
export function createMcpServer(s: Services): McpServer {
  const server = new McpServer(SERVER_INFO, {
    capabilities: { tools: {}, resources: {}, prompts: {}, completions: {}, logging: {} },
    instructions: INSTRUCTIONS,
  });
  addCrudTools(server, s);
  addPipelineTools(server, s);
  addShareTools(server, s);
  addTransformTools(server, s);
  addGatewayTools(server, s);
  addContextFeatures(server, s);
  return server;
}
