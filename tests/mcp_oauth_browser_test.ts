/**
 * The MCP consent page in Debian's Chromium: signed out, the authorization URL leads through
 * sign-in to the consent page; Allow sends the browser to the client's loopback redirect URI with a
 * code (which a browser only does if the page's form-action policy admits the redirect target), and
 * the code redeems for tokens that open an MCP session.
 */
import { assert, assertEquals } from "./assert.ts";
import { call, makeUser, startTestCloud } from "./cloud_harness.ts";
import { requirePeer } from "./support/mod.ts";
import { startChromium } from "./support/chromium.ts";

const HAS_CHROMIUM = requirePeer("chromium", "chromium", "chromium");

Deno.test({
  name: "MCP OAuth in Chromium: sign in, consent, redirect to the client's loopback listener",
  ignore: !HAS_CHROMIUM,
  fn: async () => {
    const cloud = await startTestCloud();
    const ada = await makeUser(cloud, "ada@example.com", "Radiology");
    // The native client's loopback listener (RFC 8252 §7.3).
    const codes: URL[] = [];
    const listener = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
      codes.push(new URL(req.url));
      return new Response("<!doctype html><title>done</title><p>You can close this window.</p>", {
        headers: { "content-type": "text/html" },
      });
    });
    const redirectUri = `http://127.0.0.1:${listener.addr.port}/callback`;
    // One Chromium without a profile on disk; the context is as fresh as a new profile.
    const chromiumProcess = await startChromium();
    const browser = await chromiumProcess.newContext();
    try {
      const client = await call(cloud, "POST", "/oauth/register", {
        body: { client_name: "Desktop agent", redirect_uris: [redirectUri] },
      });
      assertEquals(client.status, 201, client.text);
      const verifier = crypto.randomUUID() + crypto.randomUUID();
      const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier));
      const challenge = btoa(String.fromCharCode(...new Uint8Array(digest)))
        .replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
      const authorize = `${cloud.url}/oauth/authorize?${new URLSearchParams({
        response_type: "code",
        client_id: client.json.client_id,
        redirect_uri: redirectUri,
        code_challenge: challenge,
        code_challenge_method: "S256",
        state: "xyz",
        resource: `${cloud.baseUrl}/mcp/cloud`,
      })}`;

      const page = browser.pages()[0] ?? await browser.newPage();
      const blocked: string[] = [];
      page.on("console", (m) => {
        if (/Content Security Policy/i.test(m.text())) blocked.push(m.text());
      });
      await page.goto(authorize);
      await page.waitForURL(/\/sign-in\?next=/);
      await page.fill("#email", "ada@example.com");
      await page.fill("#password", ada.password);
      await page.click("button[type=submit]");
      await page.waitForURL(/\/oauth\/authorize\?/);
      assertEquals(await page.textContent("[data-testid=consent-client]"), "Desktop agent");
      assertEquals(
        await page.textContent("[data-testid=consent-redirect]"),
        `127.0.0.1:${listener.addr.port}`,
      );
      await page.click("button[value=allow]");
      await page.waitForURL(/\/callback\?/);
      assertEquals(blocked, []);
      // The browser may also ask the listener for /favicon.ico: take the callback itself.
      const back = codes.findLast((u) => u.pathname === "/callback")!;
      assertEquals(back.searchParams.get("state"), "xyz");
      const tokens = await call(cloud, "POST", "/oauth/token", {
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({
          grant_type: "authorization_code",
          code: back.searchParams.get("code")!,
          client_id: client.json.client_id,
          redirect_uri: redirectUri,
          code_verifier: verifier,
        }).toString(),
      });
      assertEquals(tokens.status, 200, tokens.text);
      const mcp = await fetch(`${cloud.url}/mcp/cloud`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${tokens.json.access_token}`,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: {
            protocolVersion: "2025-06-18",
            capabilities: {},
            clientInfo: { name: "desktop", version: "1" },
          },
        }),
      });
      const answer = await mcp.text();
      assert(mcp.headers.get("mcp-session-id"), answer);

      // The tokens page lists it; Revoke in the browser removes it.
      await page.goto(`${cloud.url}/tokens`);
      assert((await page.textContent("[data-testid=mcp-clients]"))!.includes("Desktop agent"));
      await page.click("[data-testid=mcp-clients] button.danger");
      await page.waitForURL(`${cloud.url}/tokens`);
      assert(!(await page.content()).includes("Desktop agent"));
      assert((await page.content()).includes("No MCP client has been approved in this team."));
    } finally {
      await chromiumProcess.close();
      await listener.shutdown();
      await cloud.stop();
    }
  },
});
