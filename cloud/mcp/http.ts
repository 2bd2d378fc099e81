/**
 * `/mcp/cloud` over Streamable HTTP: Host/Origin checks, bearer authentication (API tokens, user
 * tokens, or access tokens of the MCP authorization flow) and the per-token budget of the API,
 * then the SDK's transport. Sessions (`Mcp-Session-Id`) live in
 * memory, belong to the user and team that opened them, end on DELETE, when idle too long, or when
 * the service stops.
 */
import type { Context, Hono } from "hono";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { ApiError, type AppEnv } from "../api/mod.ts";
import { bearerAuth, MCP_RESOURCE_METADATA_PATH, requestAuthority, userOf } from "../api/mod.ts";
import { advertisedOrigin, MCP_RESOURCE_PATH, MCP_SCOPE } from "../auth/mod.ts";
import type { Services } from "../services.ts";
import { SessionEventStore } from "./event_store.ts";
import { checkHostAndOrigin } from "./guard.ts";
import { createMcpServer } from "./server.ts";

/** The path of the MCP endpoint (SPEC). */
export const MCP_PATH = MCP_RESOURCE_PATH;
/** The methods of the Streamable HTTP transport. */
const METHODS = ["POST", "GET", "DELETE"];
/** Sessions idle this long are closed. */
export const SESSION_IDLE_MS = 30 * 60_000;
/** Most open sessions per service instance; the least recently used is closed beyond it. */
export const MAX_SESSIONS = 1000;

interface Session {
  transport: WebStandardStreamableHTTPServerTransport;
  server: McpServer;
  userId: string;
  teamId: string;
  lastUsed: number;
}

/** Mounts POST, GET and DELETE of `/mcp/cloud` on `app`. */
export function mountMcp(app: Hono<AppEnv>, s: Services): void {
  const sessions = new Map<string, Session>();
  const close = (id: string) => {
    const session = sessions.get(id);
    sessions.delete(id);
    session?.server.close().catch(() => {});
  };
  s.shutdown.addEventListener("abort", () => [...sessions.keys()].forEach(close));
  const sweep = (now: number) => {
    for (const [id, session] of sessions) {
      if (now - session.lastUsed > SESSION_IDLE_MS) close(id);
    }
    if (sessions.size >= MAX_SESSIONS) close(sessions.keys().next().value!);
  };

  const gate = async (c: Context<AppEnv>, next: () => Promise<void>) => {
    if (!METHODS.includes(c.req.method)) {
      throw new ApiError(405, "method_not_allowed", `use ${METHODS.join(", ")} on ${MCP_PATH}`, {
        headers: { Allow: METHODS.join(", ") },
      });
    }
    checkHostAndOrigin(c, s.options.baseUrl);
    await next();
  };
  const handle = async (c: Context<AppEnv>) => {
    const p = userOf(c);
    const now = s.options.clock.now();
    const authInfo = {
      token: "",
      clientId: p.grant?.client_id ?? p.apiToken?.id ?? p.user.id,
      scopes: [],
      extra: { principal: p },
    };
    const sessionId = c.req.header("mcp-session-id");
    if (sessionId) {
      const session = sessions.get(sessionId);
      // A session answers only the user and team that opened it; others get "not found".
      if (!session || session.userId !== p.user.id || session.teamId !== p.team.id) {
        return c.json({
          jsonrpc: "2.0",
          error: { code: -32001, message: "Session not found: initialize a new session" },
          id: null,
        }, 404);
      }
      session.lastUsed = now;
      // Delete first: the transport's onsessionclosed runs while it answers the DELETE.
      return await session.transport.handleRequest(c.req.raw, { authInfo });
    }
    sweep(now);
    const server = createMcpServer(s);
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => crypto.randomUUID(),
      eventStore: new SessionEventStore(),
      retryInterval: 1000,
      onsessioninitialized: (id: string) => {
        sessions.set(id, {
          transport,
          server,
          userId: p.user.id,
          teamId: p.team.id,
          lastUsed: now,
        });
      },
      onsessionclosed: (id: string) => close(id),
    });
    await server.connect(transport);
    const res = await transport.handleRequest(c.req.raw, { authInfo });
    if (!transport.sessionId) await server.close();
    return res;
  };

  // A 401 names the protected resource metadata (RFC 9728 §5.1): MCP clients start the
  // authorization flow from it, on the loopback alias they connected by (auth/loopback.ts).
  // API tokens and user tokens keep working as static bearers.
  const challenge = (c: Context<AppEnv>) =>
    `Bearer realm="gateway-cloud", resource_metadata="${
      advertisedOrigin(s.options.baseUrl, requestAuthority(c, s))
    }${MCP_RESOURCE_METADATA_PATH}", scope="${MCP_SCOPE}"`;
  const auth = bearerAuth(["api_token", "user_token", "mcp_access"], challenge);
  // One ALL route (methods checked in `gate`): it is neither a REST route of the OpenAPI document
  // nor a UI page, and the route listings of those tests skip ALL routes.
  app.all(MCP_PATH, gate, auth, handle);
}
