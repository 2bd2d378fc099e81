/**
 * The official MCP conformance suite (`@modelcontextprotocol/conformance`, pinned) against
 * `/mcp/cloud`. The suite sends no bearer token, so it talks to a loopback proxy in this test that
 * adds the header of a test API token, like a reverse proxy in front of the service: the service's
 * public base URL is the proxy's, and the proxy passes the Host it received as X-Forwarded-Host.
 * Scenarios that need the suite's own fixture tools, prompts or resources are listed with reasons
 * in cloud/mcp/conformance_skips.md and not run.
 */
import { assertEquals } from "./assert.ts";
import { makeUser, startTestCloud } from "./cloud_harness.ts";
import { MCP_TEST_LIMITS } from "./mcp_harness.ts";

/** The pinned suite. */
export const CONFORMANCE = "npm:@modelcontextprotocol/conformance@0.1.16";

/** Scenarios that apply to this server (every other scenario is in conformance_skips.md). */
export const APPLICABLE = [
  "server-initialize",
  "ping",
  "tools-list",
  "tools-call-error",
  "server-sse-multiple-streams",
  "dns-rebinding-protection",
  "logging-set-level",
  "completion-complete",
  "resources-list",
  "resources-subscribe",
  "resources-unsubscribe",
  "prompts-list",
];

/** A proxy on a free loopback port forwarding to `target()` with the bearer token `token()`. */
function startProxy(
  token: () => string,
  target: () => string,
): Deno.HttpServer<Deno.NetAddr> {
  return Deno.serve({ port: 0, hostname: "127.0.0.1", onListen: () => {} }, async (req) => {
    const url = new URL(req.url);
    const headers = new Headers(req.headers);
    headers.set("authorization", `Bearer ${token()}`);
    headers.set("x-forwarded-host", req.headers.get("host") ?? "");
    const res = await fetch(`${target()}${url.pathname}${url.search}`, {
      method: req.method,
      headers,
      body: req.method === "POST" ? await req.arrayBuffer() : undefined,
      signal: req.signal,
    });
    return new Response(res.body, { status: res.status, headers: res.headers });
  });
}

/** Runs one scenario; the exit code and the suite's output. */
async function runScenario(url: string, scenario: string): Promise<{ code: number; text: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CONFORMANCE, "server", "--url", url, "--scenario", scenario],
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).output();
  const decoder = new TextDecoder();
  return { code: out.code, text: decoder.decode(out.stdout) + decoder.decode(out.stderr) };
}

Deno.test("mcp conformance: the official suite passes every applicable scenario", async () => {
  let token = "";
  let target = "";
  const proxy = startProxy(() => token, () => target);
  const publicUrl = `http://127.0.0.1:${proxy.addr.port}`;
  const cloud = await startTestCloud({ baseUrl: publicUrl, trustProxy: true, ...MCP_TEST_LIMITS });
  try {
    target = cloud.url;
    token = (await makeUser(cloud, "conformance@example.com")).apiToken;
    const failed: string[] = [];
    const only = Deno.env.get("MCP_CONFORMANCE_SCENARIOS")?.split(",");
    for (const scenario of only ?? APPLICABLE) {
      const { code, text } = await runScenario(`${publicUrl}/mcp/cloud`, scenario);
      if (code !== 0) failed.push(`${scenario} (exit ${code}):\n${text}`);
      if (Deno.env.get("MCP_CONFORMANCE_VERBOSE") === "1") console.log(text);
    }
    assertEquals(failed, []);
  } finally {
    await cloud.stop();
    await proxy.shutdown();
  }
});
