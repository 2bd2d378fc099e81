/**
 * The MCP server of the cloud service (SPEC "Endpoints / Cloud service"): Streamable HTTP at
 * `/mcp/cloud`, tools over the team-scoped resources, all in the caller's current team.
 *
 * @example
 * ```ts
 * import { MCP_PATH, SERVER_INFO } from "./mod.ts";
 *
 * // Where MCP clients connect (Streamable HTTP, with a user's bearer token) and who answers.
 * console.log(MCP_PATH, SERVER_INFO.name); // /mcp/cloud gateway-cloud
 * ```
 *
 * @module
 */
export { MAX_SESSIONS, MCP_PATH, mountMcp, SESSION_IDLE_MS } from "./http.ts";
export { createMcpServer, SERVER_INFO } from "./server.ts";
export { CHANGE, CREATE, DESTROY, type Hints, READ } from "./tool.ts";
