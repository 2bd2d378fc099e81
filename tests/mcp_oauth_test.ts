/**
 * The MCP authorization flow against the official SDK's client: discovery from the 401 (RFC 9728),
 * authorization server metadata (RFC 8414), dynamic registration (RFC 7591), the consent page,
 * PKCE S256, audience-bound tokens (RFC 8707), refresh with rotation, revocation on the tokens page
 * and at the revocation endpoint (RFC 7009); then what a hostile client or a replayed secret gets.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  type OAuthClientProvider,
  UnauthorizedError,
} from "@modelcontextprotocol/sdk/client/auth.js";
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from "@modelcontextprotocol/sdk/shared/auth.js";
import { assert, assertEquals, assertMatch } from "./assert.ts";
import {
  call,
  makeUser,
  startTestCloud,
  type TestCloud,
  uiSession,
  withCloud,
} from "./cloud_harness.ts";
import { checkAuthorizationRequest } from "../cloud/auth/mod.ts";
import { freePort } from "./support/mod.ts";
import type { OAuthClientRecord, User } from "../cloud/store/mod.ts";

const FORM = { "content-type": "application/x-www-form-urlencoded" };
const REDIRECT = "http://127.0.0.1:33418/callback";

/** The SDK's client side of OAuth, kept in memory; the "browser" is the test. */
class MemoryProvider implements OAuthClientProvider {
  clientInfo: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = "";
  authUrl: URL | undefined;
  constructor(readonly redirectUrl = REDIRECT) {}
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: "SDK test client",
      redirect_uris: [this.redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }
  clientInformation() {
    return this.clientInfo;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.clientInfo = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
  invalidateCredentials(scope: "all" | "client" | "tokens" | "verifier" | "discovery") {
    if (scope === "all" || scope === "tokens") this.saved = undefined;
    if (scope === "all" || scope === "client") this.clientInfo = undefined;
  }
}

/** Opens the consent page as `session`'s browser and submits `decision`; the redirect target. */
async function consent(
  cloud: TestCloud,
  session: { cookie: string; csrf: string },
  authUrl: URL,
  decision: "allow" | "deny" = "allow",
  teamId?: string,
): Promise<URL> {
  const local = new URL(authUrl.pathname + authUrl.search, cloud.url);
  const page = await fetch(local, { headers: { cookie: session.cookie } });
  const html = await page.text();
  assertEquals(page.status, 200, html);
  const fields: Record<string, string> = {};
  for (const m of html.matchAll(/<input type="hidden" name="([a-z_]+)" value="([^"]*)"/g)) {
    fields[m[1]] = m[2].replaceAll("&amp;", "&").replaceAll("&quot;", '"');
  }
  const team = teamId ?? /<option value="([^"]+)" selected/.exec(html)![1];
  const res = await fetch(`${cloud.url}/oauth/authorize`, {
    method: "POST",
    redirect: "manual",
    headers: { ...FORM, cookie: session.cookie, origin: cloud.url },
    body: new URLSearchParams({ ...fields, decision, team_id: team, _csrf: session.csrf }),
  });
  assertEquals(res.status, 303, await res.text());
  return new URL(res.headers.get("location")!);
}

/**
 * Runs the SDK's whole flow for `user`: 401, discovery, registration, consent, token, connect.
 * The client connects at `mcpOrigin` (default: where the test reaches the service).
 */
async function connectWithOAuth(
  cloud: TestCloud,
  user: User,
  teamId?: string,
  mcpOrigin = cloud.url,
) {
  const provider = new MemoryProvider();
  const url = new URL(`${mcpOrigin}/mcp/cloud`);
  const first = new StreamableHTTPClientTransport(url, { authProvider: provider });
  const client = new Client({ name: "oauth-test", version: "1.0.0" });
  let refused: unknown;
  await client.connect(first).catch((err: unknown) => refused = err);
  assert(refused instanceof UnauthorizedError, `expected the flow to start: ${refused}`);
  assert(provider.authUrl, "the SDK asked for no authorization");
  const back = await consent(
    cloud,
    await uiSession(cloud, user),
    provider.authUrl,
    "allow",
    teamId,
  );
  const code = back.searchParams.get("code")!;
  assert(code, back.href);
  await first.finishAuth(code);
  const transport = new StreamableHTTPClientTransport(url, { authProvider: provider });
  const connected = new Client({ name: "oauth-test", version: "1.0.0" });
  await connected.connect(transport);
  return { client: connected, transport, provider, redirect: back };
}

Deno.test("MCP OAuth: the SDK client registers, gets consent, connects, refreshes; revoking ends it", async () => {
  await withCloud(async (cloud) => {
    const ada = await makeUser(cloud, "ada@example.com", "Radiology");
    const { client, provider, redirect } = await connectWithOAuth(cloud, ada.user);
    // The redirect names the issuer (RFC 9207) and went where the client registered.
    assertEquals(redirect.searchParams.get("iss"), cloud.baseUrl);
    assertEquals(redirect.origin + redirect.pathname, REDIRECT);
    assertMatch(provider.clientInfo!.client_id, /^mcpc_/);
    assertEquals(provider.saved!.token_type, "Bearer");
    assertEquals(provider.saved!.scope, "mcp");
    assertMatch(provider.saved!.refresh_token!, /^gwr_/);

    // The token acts as Ada in her team.
    const created = await client.callTool({
      name: "create-service",
      arguments: { name: "pacs-a", description: "via OAuth", endpoint_types: ["http"] },
    });
    assert(!created.isError, JSON.stringify(created));
    const listed = await call(cloud, "GET", "/api/services", { token: ada.apiToken });
    assertEquals(listed.json.items.map((r: { name: string }) => r.name), ["pacs-a"]);
    const audit = await call(cloud, "GET", "/api/audit", { token: ada.apiToken });
    assert(
      audit.text.includes("SDK test client (ada@example.com)"),
      "the audit log names the client and the user",
    );

    // Audience-bound: the access token is refused by the REST API; user tokens are not MCP's.
    const rest = await call(cloud, "GET", "/api/me", { token: provider.saved!.access_token });
    assertEquals(rest.status, 401, rest.text);

    // After the access token expired the SDK refreshes on its own; the refresh token rotates.
    const firstRefresh = provider.saved!.refresh_token!;
    cloud.clock.advance(2 * 3600_000);
    const again = await client.callTool({ name: "list-services", arguments: {} });
    assert(!again.isError, JSON.stringify(again));
    assert(provider.saved!.refresh_token !== firstRefresh, "the refresh token was rotated");

    // The tokens page lists the client; revoking it there ends access at once.
    const session = await uiSession(cloud, ada.user);
    const page = await (await fetch(`${cloud.url}/tokens`, { headers: session })).text();
    assert(page.includes("SDK test client"), "the tokens page lists the approved client");
    const grantId = /action="\/tokens\/mcp\/([^/]+)\/revoke"/.exec(page)![1];
    const revoke = await fetch(`${cloud.url}/tokens/mcp/${grantId}/revoke`, {
      method: "POST",
      redirect: "manual",
      headers: { ...FORM, cookie: session.cookie, origin: cloud.url },
      body: new URLSearchParams({ _csrf: session.csrf }),
    });
    assertEquals(revoke.status, 303);
    const refused = await client.callTool({ name: "list-services", arguments: {} }).then(
      () => undefined,
      (err: unknown) => err,
    );
    assert(refused instanceof UnauthorizedError, `a revoked client must re-authorize: ${refused}`);
    assert(provider.saved === undefined, "the SDK dropped the refused tokens");
    const after = await (await fetch(`${cloud.url}/tokens`, { headers: session })).text();
    assert(!after.includes("SDK test client"), "the revoked client is gone from the list");
    await client.close();
  });
});

Deno.test("MCP OAuth: discovery documents and the 401 challenge", async () => {
  await withCloud(async (cloud) => {
    const res = await fetch(`${cloud.url}/mcp/cloud`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json" },
      body: "{}",
    });
    await res.body?.cancel();
    assertEquals(res.status, 401);
    const challenge = res.headers.get("www-authenticate")!;
    const metadataUrl = /resource_metadata="([^"]+)"/.exec(challenge)![1];
    assertEquals(
      metadataUrl,
      `${cloud.baseUrl}/.well-known/oauth-protected-resource/mcp/cloud`,
    );
    const prm = await (await fetch(new URL(new URL(metadataUrl).pathname, cloud.url))).json();
    assertEquals(prm.resource, `${cloud.baseUrl}/mcp/cloud`);
    assertEquals(prm.authorization_servers, [cloud.baseUrl]);
    const asRes = await fetch(`${cloud.url}/.well-known/oauth-authorization-server`, {
      headers: { origin: "http://localhost:6274" },
    });
    assertEquals(asRes.headers.get("access-control-allow-origin"), "*");
    const as = await asRes.json();
    assertEquals(as.issuer, cloud.baseUrl);
    assertEquals(as.code_challenge_methods_supported, ["S256"]);
    assertEquals(as.response_types_supported, ["code"]);
    assert(as.grant_types_supported.includes("authorization_code"));
    assert(as.grant_types_supported.includes("urn:ietf:params:oauth:grant-type:device_code"));
    assertEquals(as.registration_endpoint, `${cloud.baseUrl}/oauth/register`);
    // A browser-based client's preflight for registration is answered.
    const preflight = await fetch(`${cloud.url}/oauth/register`, {
      method: "OPTIONS",
      headers: {
        origin: "http://localhost:6274",
        "access-control-request-method": "POST",
        "access-control-request-headers": "content-type",
      },
    });
    await preflight.body?.cancel();
    assertEquals(preflight.status, 204);
    assertEquals(preflight.headers.get("access-control-allow-origin"), "*");
  });
});

/** Registers a client over HTTP; the answer. */
async function register(cloud: TestCloud, metadata: unknown) {
  return await call(cloud, "POST", "/oauth/register", { body: metadata });
}

/** An S256 pair. */
async function pkce(): Promise<{ verifier: string; challenge: string }> {
  const verifier = crypto.randomUUID() + crypto.randomUUID();
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier));
  const challenge = btoa(String.fromCharCode(...new Uint8Array(digest)))
    .replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  return { verifier, challenge };
}

Deno.test("MCP OAuth: registration refuses dangerous redirect URIs and bad metadata", async () => {
  await withCloud(async (cloud) => {
    for (
      const [uri, why] of [
        ["javascript:alert(1)", "forbidden scheme"],
        // Every scheme ending in `script`, whatever its case.
        ["x-javascript:alert(1)", "forbidden scheme x-javascript:"],
        ["X-JavaScript:alert(1)", "forbidden scheme x-javascript:"],
        ["vbscript:msgbox(1)", "forbidden scheme vbscript:"],
        ["LiveScript:alert(1)", "forbidden scheme livescript:"],
        ["com.example.jscript:/cb", "forbidden scheme"],
        // Schemes the browser handles itself.
        ["data:text/html,hi", "forbidden scheme"],
        ["file:///etc/passwd", "forbidden scheme"],
        ["blob:https://app.example/0f6d", "forbidden scheme blob:"],
        ["about:blank", "forbidden scheme about:"],
        ["view-source:https://app.example/cb", "forbidden scheme view-source:"],
        ["filesystem:https://app.example/temporary/cb", "forbidden scheme filesystem:"],
        ["ws://127.0.0.1:9/cb", "forbidden scheme ws:"],
        ["wss://app.example/cb", "forbidden scheme wss:"],
        ["intent://cb#Intent;scheme=https;end", "fragment"],
        ["intent://cb", "forbidden scheme intent:"],
        // The URL parser would drop the newline and read `javascript:`.
        ["java\nscript:alert(1)", "control characters"],
        [" https://app.example/cb", "spaces"],
        ["http://evil.example/cb", "loopback"],
        ["http://localhost.evil.example/cb", "loopback"],
        ["https://app.example/cb#frag", "fragment"],
        ["https://user:pw@app.example/cb", "user information"],
        ["not a uri", "absolute"],
      ]
    ) {
      const res = await register(cloud, { redirect_uris: [uri] });
      assertEquals(res.status, 400, uri);
      assertEquals(res.json.error, "invalid_redirect_uri", uri);
      assert(res.json.error_description.includes(why), `${uri}: ${res.json.error_description}`);
    }
    assertEquals((await register(cloud, { client_name: "x" })).json.error, "invalid_redirect_uri");
    assertEquals((await register(cloud, "[1]")).json.error, "invalid_client_metadata");
    const creds = await register(cloud, {
      redirect_uris: [REDIRECT],
      grant_types: ["client_credentials"],
    });
    assertEquals(creds.json.error, "invalid_client_metadata");
    // Accepted: https, loopback http, a native app's own scheme (reverse-domain, RFC 8252 §7.1,
    // or a single name as MCP clients use); the name loses control characters.
    const accepted = [
      "https://app.example/cb",
      "http://[::1]:9/cb",
      "http://127.0.0.1/cb",
      "http://localhost:33418/callback",
      "cursor://anysphere/cb",
      "com.example.app:/oauth2redirect",
      "Com.Example.App:/cb",
      "net.scriptorium.app:/cb",
    ];
    const ok = await register(cloud, {
      client_name: "Cursor\u202e\u0007 IDE",
      redirect_uris: accepted,
      token_endpoint_auth_method: "client_secret_basic",
    });
    assertEquals(ok.status, 201, ok.text);
    assertEquals(ok.json.redirect_uris, accepted);
    assertEquals(ok.json.client_name, "Cursor IDE");
    assertEquals(ok.json.token_endpoint_auth_method, "none");
    assertEquals(ok.headers.get("cache-control"), "no-store");
  }, { rateLimits: { clientRegistrationPerIp: { limit: 100, windowSeconds: 60 } } as never });
});

Deno.test("MCP OAuth: a refused redirect URI reaches neither consent nor a redirect by another route", async () => {
  await withCloud(async (cloud) => {
    const ada = await makeUser(cloud, "ada@example.com");
    const session = await uiSession(cloud, ada.user);
    const { challenge } = await pkce();
    // Clients stored under an older, looser rule (KV keeps a used client for 90 days).
    const stored = async (uri: string) => {
      const record: OAuthClientRecord = {
        client_id: `mcpc_legacy${crypto.randomUUID().slice(0, 8)}`,
        client_name: "legacy",
        client_uri: null,
        redirect_uris: [uri],
        created_at: new Date(cloud.clock.now()).toISOString(),
        last_used_at: null,
      };
      await cloud.server.services.store.oauth.addClient(record, 60_000);
      return record.client_id;
    };
    const request = (clientId: string, extra: Record<string, string> = {}) => ({
      response_type: "code",
      client_id: clientId,
      code_challenge: challenge,
      code_challenge_method: "S256",
      state: "st",
      ...extra,
    });
    const refused = async (res: Response, what: string) => {
      const html = await res.text();
      assertEquals(res.status, 400, `${what}: ${html.slice(0, 200)}`);
      assertEquals(res.headers.get("location"), null, what);
      assert(html.includes("consent-error"), what);
    };
    for (const uri of ["x-javascript:alert(1)", "VBScript:msgbox(1)", "data:text/html,x"]) {
      const id = await stored(uri);
      for (
        const params of [
          request(id, { redirect_uri: uri }),
          request(id), // the only registered URI is used
          request(id, { redirect_uri: uri, response_type: "token" }), // an error to send back
        ]
      ) {
        await refused(
          await fetch(`${cloud.url}/oauth/authorize?${new URLSearchParams(params)}`, {
            headers: { cookie: session.cookie },
            redirect: "manual",
          }),
          `GET ${JSON.stringify(params)}`,
        );
      }
      // The consent form posted directly, with a valid session and CSRF token.
      await refused(
        await fetch(`${cloud.url}/oauth/authorize`, {
          method: "POST",
          redirect: "manual",
          headers: { ...FORM, cookie: session.cookie, origin: cloud.url },
          body: new URLSearchParams({
            ...request(id, { redirect_uri: uri }),
            decision: "allow",
            team_id: ada.team.id,
            _csrf: session.csrf,
          }),
        }),
        `POST ${uri}`,
      );
    }
    // A registered loopback client cannot swap its scheme for another through the port rule.
    const client = (await register(cloud, { redirect_uris: ["http://127.0.0.1:33418/callback"] }))
      .json;
    for (const uri of ["ws://127.0.0.1:33418/callback", "javascript://127.0.0.1/callback"]) {
      await refused(
        await fetch(
          `${cloud.url}/oauth/authorize?${new URLSearchParams(
            request(client.client_id, { redirect_uri: uri }),
          )}`,
          { headers: { cookie: session.cookie }, redirect: "manual" },
        ),
        uri,
      );
    }
  });
});

Deno.test("MCP OAuth: registrations are rate limited per address", async () => {
  await withCloud(async (cloud) => {
    const statuses = [];
    for (let i = 0; i < 4; i++) {
      statuses.push((await register(cloud, { redirect_uris: [REDIRECT] })).status);
    }
    assertEquals(statuses, [201, 201, 201, 429]);
  }, { rateLimits: { clientRegistrationPerIp: { limit: 3, windowSeconds: 60 } } as never });
});

Deno.test("MCP OAuth: the authorization request is checked before and after consent", async () => {
  await withCloud(async (cloud) => {
    const ada = await makeUser(cloud, "ada@example.com");
    const session = await uiSession(cloud, ada.user);
    const client = (await register(cloud, { client_name: "c", redirect_uris: [REDIRECT] })).json;
    const { verifier, challenge } = await pkce();
    const base = {
      response_type: "code",
      client_id: client.client_id,
      redirect_uri: REDIRECT,
      code_challenge: challenge,
      code_challenge_method: "S256",
      state: "st-1",
      resource: `${cloud.baseUrl}/mcp/cloud`,
    };
    const open = (params: Record<string, string>) =>
      fetch(`${cloud.url}/oauth/authorize?${new URLSearchParams(params)}`, {
        headers: { cookie: session.cookie },
        redirect: "manual",
      });

    // Signed out: to the sign-in page, coming back to the same request.
    const signedOut = await fetch(`${cloud.url}/oauth/authorize?${new URLSearchParams(base)}`, {
      redirect: "manual",
    });
    assertEquals(signedOut.status, 302);
    assert(signedOut.headers.get("location")!.startsWith("/sign-in?next=%2Foauth%2Fauthorize"));

    // An unknown client or an unregistered redirect URI: an error page, never a redirect.
    for (
      const params of [
        { ...base, client_id: "mcpc_unknown" },
        { ...base, redirect_uri: "http://127.0.0.1:1/other" },
        { ...base, redirect_uri: "https://evil.example/cb" },
      ]
    ) {
      const res = await open(params);
      assertEquals(res.status, 400, JSON.stringify(params));
      assert((await res.text()).includes("consent-error"));
    }
    // Other problems go back to the client with the state.
    for (
      const [params, error] of [
        [{ ...base, code_challenge_method: "plain" }, "invalid_request"],
        [{ ...base, code_challenge: "" }, "invalid_request"],
        [{ ...base, response_type: "token" }, "unsupported_response_type"],
        [{ ...base, resource: "https://other.example/mcp" }, "invalid_target"],
      ] as const
    ) {
      const res = await open(params);
      assertEquals(res.status, 302, error);
      const to = new URL(res.headers.get("location")!);
      assertEquals(to.searchParams.get("error"), error);
      assertEquals(to.searchParams.get("state"), "st-1");
    }

    // A loopback redirect URI may change its port (RFC 8252); the consent page's CSP lets the
    // form's redirect reach it.
    const moved = { ...base, redirect_uri: "http://127.0.0.1:40001/callback" };
    const page = await open(moved);
    assertEquals(page.status, 200);
    assertMatch(
      page.headers.get("content-security-policy")!,
      /form-action 'self' http:\/\/127\.0\.0\.1:40001/,
    );
    await page.body?.cancel();

    // Hidden fields are checked again: a form posted with another redirect URI is refused.
    const forged = await fetch(`${cloud.url}/oauth/authorize`, {
      method: "POST",
      redirect: "manual",
      headers: { ...FORM, cookie: session.cookie, origin: cloud.url },
      body: new URLSearchParams({
        ...base,
        redirect_uri: "https://evil.example/cb",
        decision: "allow",
        team_id: ada.team.id,
        _csrf: session.csrf,
      }),
    });
    assertEquals(forged.status, 400);
    await forged.body?.cancel();
    // Without the CSRF token nothing is issued.
    const noCsrf = await fetch(`${cloud.url}/oauth/authorize`, {
      method: "POST",
      redirect: "manual",
      headers: { ...FORM, cookie: session.cookie, origin: cloud.url },
      body: new URLSearchParams({ ...base, decision: "allow", team_id: ada.team.id }),
    });
    assertEquals(noCsrf.status, 403);
    await noCsrf.body?.cancel();
    // A team the user is not in is refused.
    const eve = await makeUser(cloud, "eve@example.com", "Eve's");
    const otherTeam = await fetch(`${cloud.url}/oauth/authorize`, {
      method: "POST",
      redirect: "manual",
      headers: { ...FORM, cookie: session.cookie, origin: cloud.url },
      body: new URLSearchParams({
        ...base,
        decision: "allow",
        team_id: eve.team.id,
        _csrf: session.csrf,
      }),
    });
    assertEquals(otherTeam.status, 400);
    await otherTeam.body?.cancel();

    // Deny goes back with access_denied.
    const denied = await consent(
      cloud,
      session,
      new URL(`/oauth/authorize?${new URLSearchParams(base)}`, cloud.url),
      "deny",
    );
    assertEquals(denied.searchParams.get("error"), "access_denied");
    assertEquals(denied.searchParams.get("state"), "st-1");
    assertEquals(denied.searchParams.get("code"), null);

    // Allow: a code bound to the client, the redirect URI, the challenge and the resource.
    const allowed = await consent(
      cloud,
      session,
      new URL(`/oauth/authorize?${new URLSearchParams(base)}`, cloud.url),
    );
    const code = allowed.searchParams.get("code")!;
    const token = (params: Record<string, string>) =>
      call(cloud, "POST", "/oauth/token", {
        headers: FORM,
        body: new URLSearchParams({
          grant_type: "authorization_code",
          code,
          client_id: client.client_id,
          redirect_uri: REDIRECT,
          code_verifier: verifier,
          ...params,
        }).toString(),
      });
    assertEquals(
      (await token({ code_verifier: (await pkce()).verifier })).json.error,
      "invalid_grant",
    );
    assertEquals(
      (await token({ redirect_uri: "http://127.0.0.1:1/x" })).json.error,
      "invalid_grant",
    );
    assertEquals(
      (await token({ resource: "https://other.example/mcp" })).json.error,
      "invalid_target",
    );
    const other = (await register(cloud, { redirect_uris: [REDIRECT] })).json;
    assertEquals((await token({ client_id: other.client_id })).json.error, "invalid_grant");
    assertEquals((await token({ client_id: "mcpc_nobody" })).status, 401);
    const good = await token({});
    assertEquals(good.status, 200, good.text);
    const access = good.json.access_token;
    const mcpOk = await fetch(`${cloud.url}/mcp/cloud`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${access}`,
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
          clientInfo: { name: "r", version: "1" },
        },
      }),
    });
    await mcpOk.body?.cancel();
    assertEquals(mcpOk.status, 200);

    // The same code again: refused, and the grant it made is withdrawn (the code leaked).
    const replay = await token({});
    assertEquals(replay.json.error, "invalid_grant");
    const afterReplay = await fetch(`${cloud.url}/mcp/cloud`, {
      method: "POST",
      headers: { authorization: `Bearer ${access}`, "content-type": "application/json" },
      body: "{}",
    });
    await afterReplay.body?.cancel();
    assertEquals(afterReplay.status, 401);

    // An expired code is refused.
    const late = await consent(
      cloud,
      session,
      new URL(`/oauth/authorize?${new URLSearchParams(base)}`, cloud.url),
    );
    cloud.clock.advance(6 * 60_000);
    const lateToken = await call(cloud, "POST", "/oauth/token", {
      headers: FORM,
      body: new URLSearchParams({
        grant_type: "authorization_code",
        code: late.searchParams.get("code")!,
        client_id: client.client_id,
        redirect_uri: REDIRECT,
        code_verifier: verifier,
      }).toString(),
    });
    assertEquals(lateToken.json.error, "invalid_grant");
  }, { rateLimits: { clientRegistrationPerIp: { limit: 100, windowSeconds: 60 } } as never });
});

Deno.test("MCP OAuth: a replayed refresh token ends the grant; RFC 7009 revocation; members see their own", async () => {
  await withCloud(async (cloud) => {
    const ada = await makeUser(cloud, "ada@example.com", "Radiology");
    const bob = await makeUser(cloud, "bob@example.com", "Bob's");
    // Bob also joins Ada's team as a member (not owner).
    await call(cloud, "POST", "/api/team/members", {
      token: ada.apiToken,
      body: { email: "bob@example.com", role: "member" },
    });
    const adaFlow = await connectWithOAuth(cloud, ada.user);
    const refresh = (token: string, clientId: string) =>
      call(cloud, "POST", "/oauth/token", {
        headers: FORM,
        body: new URLSearchParams({
          grant_type: "refresh_token",
          refresh_token: token,
          client_id: clientId,
        })
          .toString(),
      });
    const clientId = adaFlow.provider.clientInfo!.client_id;
    const r0 = adaFlow.provider.saved!.refresh_token!;
    const r1 = await refresh(r0, clientId);
    assertEquals(r1.status, 200, r1.text);
    // r0 again: someone kept a copy. The grant ends for everyone, r1 included.
    assertEquals((await refresh(r0, clientId)).json.error, "invalid_grant");
    assertEquals((await refresh(r1.json.refresh_token, clientId)).json.error, "invalid_grant");
    const gone = await fetch(`${cloud.url}/mcp/cloud`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${r1.json.access_token}`,
        "content-type": "application/json",
      },
      body: "{}",
    });
    await gone.body?.cancel();
    assertEquals(gone.status, 401);

    // RFC 7009: the client revokes its own refresh token; another client's id changes nothing.
    const second = await connectWithOAuth(cloud, ada.user);
    const secondId = second.provider.clientInfo!.client_id;
    const token = second.provider.saved!.refresh_token!;
    const wrong = await call(cloud, "POST", "/oauth/revoke", {
      headers: FORM,
      body: new URLSearchParams({ token, client_id: clientId }).toString(),
    });
    assertEquals(wrong.status, 200);
    const rotated = await refresh(token, secondId);
    assertEquals(rotated.status, 200);
    // Its own id: the grant ends (here revoked by its access token; a refresh token works alike).
    const own = await call(cloud, "POST", "/oauth/revoke", {
      headers: FORM,
      body: new URLSearchParams({ token: rotated.json.access_token, client_id: secondId })
        .toString(),
    });
    assertEquals(own.status, 200);
    assertEquals((await refresh(rotated.json.refresh_token, secondId)).json.error, "invalid_grant");

    // Bob, a member of Ada's team, approves a client there: he sees only his own on the tokens
    // page, and cannot revoke Ada's; Ada (owner) sees both.
    const adaLive = await connectWithOAuth(cloud, ada.user);
    const bobFlow = await connectWithOAuth(cloud, bob.user, ada.team.id);
    const bobSession = await uiSession(cloud, bob.user);
    const switched = await fetch(`${cloud.url}/teams/switch`, {
      method: "POST",
      redirect: "manual",
      headers: { ...FORM, cookie: bobSession.cookie, origin: cloud.url },
      body: new URLSearchParams({ _csrf: bobSession.csrf, team_id: ada.team.id, back: "/tokens" }),
    });
    assertEquals(switched.status, 303);
    await switched.body?.cancel();
    const adaSession = await uiSession(cloud, ada.user);
    const adaPage = await (await fetch(`${cloud.url}/tokens`, { headers: adaSession })).text();
    const adaGrants = [...adaPage.matchAll(/action="\/tokens\/mcp\/([^/]+)\/revoke"/g)].map((m) =>
      m[1]
    );
    assertEquals(adaGrants.length, 2, adaPage);
    const bobPage = await (await fetch(`${cloud.url}/tokens`, { headers: bobSession })).text();
    const bobGrants = [...bobPage.matchAll(/action="\/tokens\/mcp\/([^/]+)\/revoke"/g)].map((m) =>
      m[1]
    );
    assertEquals(bobGrants.length, 1);
    assert(adaGrants.includes(bobGrants[0]));
    const adaOwn = adaGrants.find((id) => !bobGrants.includes(id))!;
    const bobTry = await fetch(`${cloud.url}/tokens/mcp/${adaOwn}/revoke`, {
      method: "POST",
      redirect: "manual",
      headers: { ...FORM, cookie: bobSession.cookie, origin: cloud.url },
      body: new URLSearchParams({ _csrf: bobSession.csrf }),
    });
    assertEquals(bobTry.status, 400);
    await bobTry.body?.cancel();
    await adaFlow.client.close();
    await second.client.close();
    await bobFlow.client.close();
    await adaLive.client.close();
  });
});

/** A GET with a chosen Host header (fetch sets its own): status and JSON body. */
async function getWithHost(port: number, path: string, host: string) {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  await conn.write(
    new TextEncoder().encode(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`),
  );
  const text = await new Response(conn.readable).text();
  const status = Number(text.split(" ", 2)[1]);
  const json = /\{.*\}/s.exec(text.slice(text.indexOf("\r\n\r\n") + 4))?.[0];
  return { status, json: json ? JSON.parse(json) : undefined, text };
}

Deno.test("MCP OAuth: a client on the other loopback name of the base URL completes the SDK flow, both ways", async () => {
  for (const [baseHost, clientHost] of [["localhost", "127.0.0.1"], ["127.0.0.1", "localhost"]]) {
    const port = freePort();
    await withCloud(async (cloud) => {
      const ada = await makeUser(cloud, `ada-${baseHost}@example.com`);
      // The client connects by one name; the browser shows the consent page at the base URL.
      const browser = { ...cloud, url: cloud.baseUrl };
      const clientOrigin = `http://${clientHost}:${port}`;
      const { client, provider } = await connectWithOAuth(
        browser,
        ada.user,
        undefined,
        clientOrigin,
      );
      const listed = await client.callTool({ name: "list-services", arguments: {} });
      assert(!listed.isError, JSON.stringify(listed));
      // The metadata the SDK accepted named the alias; the grant is for the canonical resource.
      const prm = await (await fetch(
        `${clientOrigin}/.well-known/oauth-protected-resource/mcp/cloud`,
      )).json();
      assertEquals(prm.resource, `${clientOrigin}/mcp/cloud`);
      assertEquals(prm.authorization_servers, [cloud.baseUrl]);
      const claims = JSON.parse(atob(
        provider.saved!.access_token.split(".")[1]
          .replace(/-/g, "+").replace(/_/g, "/"),
      ));
      assertEquals(claims.aud, `${cloud.baseUrl}/mcp/cloud`);
      // Refreshing with the alias as the resource works too (RFC 8707 at the token endpoint).
      cloud.clock.advance(2 * 3600_000);
      const again = await client.callTool({ name: "list-services", arguments: {} });
      assert(!again.isError, JSON.stringify(again));
      await client.close();
    }, { port, baseUrl: `http://${baseHost}:${port}` });
  }
});

Deno.test("MCP OAuth: only a loopback alias of a loopback base URL changes the advertised resource", async () => {
  const path = "/.well-known/oauth-protected-resource/mcp/cloud";
  const port = freePort();
  await withCloud(async (cloud) => {
    const canonical = `http://localhost:${port}/mcp/cloud`;
    const seen = async (host: string) => (await getWithHost(port, path, host)).json?.resource;
    assertEquals(await seen(`127.0.0.1:${port}`), `http://127.0.0.1:${port}/mcp/cloud`);
    assertEquals(await seen(`[::1]:${port}`), `http://[::1]:${port}/mcp/cloud`);
    assertEquals(await seen(`localhost:${port}`), canonical);
    for (
      const foreign of [
        `evil.example:${port}`,
        `localhost.evil.example:${port}`,
        `127.0.0.1:${port + 1}`,
        `user@127.0.0.1:${port}`,
        "127.0.0.1",
      ]
    ) {
      assertEquals(await seen(foreign), canonical, foreign);
    }
    // The 401 of /mcp/cloud names the metadata on the alias the client used.
    const conn = await Deno.connect({ hostname: "127.0.0.1", port });
    await conn.write(new TextEncoder().encode(
      `POST /mcp/cloud HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\n` +
        "Accept: application/json, text/event-stream\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}",
    ));
    const answer = await new Response(conn.readable).text();
    assertMatch(answer, /^HTTP\/1\.1 401/);
    assert(
      answer.includes(`resource_metadata="http://127.0.0.1:${port}${path}"`),
      answer.split("\r\n\r\n")[0],
    );
    // An alias is accepted as the resource indicator; another host is not.
    const s = cloud.server.services;
    const registered = await register(cloud, { redirect_uris: [REDIRECT] });
    const { challenge } = await pkce();
    const ask = (resource: string) =>
      checkAuthorizationRequest(s, {
        response_type: "code",
        client_id: registered.json.client_id,
        code_challenge: challenge,
        code_challenge_method: "S256",
        resource,
      });
    const viaAlias = await ask(`http://127.0.0.1:${port}/mcp/cloud`);
    assert(viaAlias.ok, JSON.stringify(viaAlias));
    assertEquals(viaAlias.request.resource, canonical);
    const foreign = await ask(`http://evil.example:${port}/mcp/cloud`);
    assert(!foreign.ok && "redirect" in foreign && foreign.redirect.includes("invalid_target"));
  }, { port, baseUrl: `http://localhost:${port}` });

  // A public base URL has no aliases: a loopback Host changes nothing.
  const pub = await startTestCloud({ baseUrl: "https://cloud.example.com" });
  try {
    const res = await getWithHost(pub.server.port, path, `127.0.0.1:${pub.server.port}`);
    assertEquals(res.json.resource, "https://cloud.example.com/mcp/cloud");
    const s = pub.server.services;
    const registered = await register(pub, { redirect_uris: [REDIRECT] });
    const { challenge } = await pkce();
    const aliased = await checkAuthorizationRequest(s, {
      response_type: "code",
      client_id: registered.json.client_id,
      code_challenge: challenge,
      code_challenge_method: "S256",
      resource: `http://127.0.0.1:${pub.server.port}/mcp/cloud`,
    });
    assert(!aliased.ok && "redirect" in aliased && aliased.redirect.includes("invalid_target"));
  } finally {
    await pub.stop();
  }
});
