/** MCP test helpers: an SDK client connected over Streamable HTTP to a test cloud service. */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { TestCloud } from "./cloud_harness.ts";

/** A connected client. */
export interface TestMcp {
  client: Client;
  /** Calls a tool; returns its structured content, throwing with the text on `isError`. */
  // deno-lint-ignore no-explicit-any
  call(name: string, args?: Record<string, unknown>): Promise<any>;
  /** Calls a tool and returns the raw result. */
  // deno-lint-ignore no-explicit-any
  raw(name: string, args?: Record<string, unknown>): Promise<any>;
  close(): Promise<void>;
}

/** Connects the SDK's client to `/mcp/cloud` with `token`. */
export async function connectMcp(cloud: TestCloud, token: string): Promise<TestMcp> {
  const client = new Client({ name: "mcp-test", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`${cloud.url}/mcp/cloud`), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  const raw = (name: string, args: Record<string, unknown> = {}) =>
    client.callTool({ name, arguments: args });
  return {
    client,
    raw,
    call: async (name, args = {}) => {
      const res = await raw(name, args);
      if (res.isError) {
        throw new Error(`${name}: ${(res.content as { text: string }[])[0].text}`);
      }
      return res.structuredContent;
    },
    close: async () => {
      await transport.terminateSession().catch(() => {});
      await client.close();
    },
  };
}

/** The text of a tool error result. */
// deno-lint-ignore no-explicit-any
export function errorText(res: any): string {
  if (!res.isError) throw new Error(`expected a tool error, got ${JSON.stringify(res)}`);
  return (res.content as { text: string }[]).map((c) => c.text).join("\n");
}

/** Limits high enough for tests that make many calls. */
export const MCP_TEST_LIMITS = {
  rateLimits: { perToken: { limit: 100_000, windowSeconds: 60 } } as never,
};
