/**
 * The MCP server of the cloud service (SPEC "Endpoints / Cloud service"): Streamable HTTP at
 * `/mcp/cloud`, tools over the team-scoped resources, all in the caller's current team.
 *
 * @module
 */
export { MAX_SESSIONS, MCP_PATH, mountMcp, SESSION_IDLE_MS } from "./http.ts";
export { createMcpServer, SERVER_INFO } from "./server.ts";
export { CHANGE, CREATE, DESTROY, type Hints, READ } from "./tool.ts";
