/**
 * The HTTP side of `/mcp/cloud`: bearer authentication (401 with WWW-Authenticate), Host and
 * Origin checks (DNS rebinding), sessions bound to their user and team, DELETE ending a session,
 * and the annotations of every tool.
 */
import { isOwnAuthority } from "../cloud/mcp/guard.ts";
import { assert, assertEquals } from "./assert.ts";
import { call, makeUser, type TestCloud, withCloud } from "./cloud_harness.ts";
import { connectMcp } from "./mcp_harness.ts";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";

const INIT = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: {
    protocolVersion: "2025-06-18",
    capabilities: {},
    clientInfo: { name: "raw", version: "1" },
  },
};

function post(
  cloud: TestCloud,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(`${cloud.url}/mcp/cloud`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...headers,
    },
    body: JSON.stringify(body),
  });
}

/** A POST of INIT with a chosen Host header over a plain TCP connection; the response head and body. */
async function rawPost(cloud: TestCloud, host: string, token: string): Promise<string> {
  const body = JSON.stringify(INIT);
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: cloud.server.port });
  try {
    const head = [
      "POST /mcp/cloud HTTP/1.1",
      `Host: ${host}`,
      `Authorization: Bearer ${token}`,
      "Content-Type: application/json",
      "Accept: application/json, text/event-stream",
      `Content-Length: ${body.length}`,
      "Connection: close",
    ].join("\r\n");
    await conn.write(new TextEncoder().encode(`${head}\r\n\r\n${body}`));
    let out = "";
    const buf = new Uint8Array(16384);
    const decoder = new TextDecoder();
    while (!out.includes("\r\n\r\n") || !/"(error|result)"/.test(out)) {
      const n = await conn.read(buf);
      if (n === null) break;
      out += decoder.decode(buf.subarray(0, n));
    }
    return out;
  } finally {
    conn.close();
  }
}

Deno.test("mcp http: no token, a bad token and a machine token answer 401 with WWW-Authenticate", async () => {
  await withCloud(async (cloud) => {
    const u = await makeUser(cloud, "ada@example.com");
    const machine = (await call(cloud, "POST", "/api/gateway/authorize", {
      token: u.apiToken,
      body: { gateway_code: "edge-1" },
    })).json.machine_token;
    const bad = [
      undefined,
      "Bearer gwc_" + "x".repeat(43),
      "Basic Zm9vOmJhcg==",
      "Bearer junk",
      `Bearer ${machine}`,
    ];
    for (const auth of bad) {
      const res = await post(cloud, INIT, auth ? { authorization: auth } : {});
      const body = await res.json();
      assertEquals(res.status, 401, String(auth));
      assertEquals(
        res.headers.get("www-authenticate"),
        `Bearer realm="gateway-cloud", resource_metadata="${cloud.baseUrl}/.well-known/oauth-protected-resource/mcp/cloud", scope="mcp"`,
      );
      assertEquals(body.error.code, "unauthorized");
    }
    const put = await fetch(`${cloud.url}/mcp/cloud`, { method: "PUT", body: "{}" });
    assertEquals([put.status, put.headers.get("allow")], [405, "POST, GET, DELETE"]);
    await put.body?.cancel();
    const get = await fetch(`${cloud.url}/mcp/cloud`, { headers: { accept: "text/event-stream" } });
    await get.body?.cancel();
    assertEquals(get.status, 401);
  });
});

Deno.test("mcp http: a foreign Origin or Host is refused before anything else (DNS rebinding)", async () => {
  await withCloud(async (cloud) => {
    const u = await makeUser(cloud, "ada@example.com");
    const auth = { authorization: `Bearer ${u.apiToken}` };
    const evilOrigin = await post(cloud, INIT, { ...auth, origin: "http://evil.example" });
    assertEquals([evilOrigin.status, (await evilOrigin.json()).error.code], [
      403,
      "forbidden_origin",
    ]);
    // fetch always sends the real Host: write the request by hand.
    const evilHost = await rawPost(cloud, "evil.example", u.apiToken);
    assert(evilHost.startsWith("HTTP/1.1 403"), evilHost);
    assert(evilHost.includes('"forbidden_host"'), evilHost);
    const ownHost = await rawPost(cloud, new URL(cloud.baseUrl).host, u.apiToken);
    assert(ownHost.startsWith("HTTP/1.1 200"), ownHost);
    const noToken = await post(cloud, INIT, { origin: "http://evil.example" });
    assertEquals(noToken.status, 403);
    await noToken.body?.cancel();
    // The service's own origin is fine.
    const own = await post(cloud, INIT, { ...auth, origin: new URL(cloud.baseUrl).origin });
    assertEquals(own.status, 200);
    assert(own.headers.get("mcp-session-id"));
    await own.body?.cancel();
    // Its base URL is a loopback address: the loopback aliases on the same port are the service
    // too (a client may say localhost for 127.0.0.1), other ports and hosts are not.
    const port = new URL(cloud.baseUrl).port;
    for (const alias of [`localhost:${port}`, `[::1]:${port}`, `127.0.0.1:${port}`]) {
      const res = await rawPost(cloud, alias, u.apiToken);
      assert(res.startsWith("HTTP/1.1 200"), `${alias}: ${res.slice(0, 80)}`);
    }
    for (const foreign of [`localhost:${Number(port) + 1}`, `localhost.evil.example:${port}`]) {
      const res = await rawPost(cloud, foreign, u.apiToken);
      assert(res.startsWith("HTTP/1.1 403"), `${foreign}: ${res.slice(0, 80)}`);
    }
    const aliasOrigin = await post(cloud, INIT, { ...auth, origin: `http://localhost:${port}` });
    assertEquals(aliasOrigin.status, 200);
    await aliasOrigin.body?.cancel();
  });
});

Deno.test("mcp guard: loopback aliases only for a loopback base URL", () => {
  const loop = new URL("http://127.0.0.1:8000");
  assert(isOwnAuthority("localhost:8000", loop));
  assert(isOwnAuthority("[::1]:8000", loop));
  assert(!isOwnAuthority("localhost:8001", loop));
  assert(!isOwnAuthority("localhost", loop));
  assert(!isOwnAuthority("user@localhost:8000", loop));
  const pub = new URL("https://cloud.example.com");
  assert(isOwnAuthority("cloud.example.com", pub));
  assert(isOwnAuthority("CLOUD.example.com", pub));
  assert(!isOwnAuthority("localhost:443", pub));
  assert(!isOwnAuthority("127.0.0.1", pub));
  assert(isOwnAuthority("localhost", new URL("http://localhost")));
  assert(isOwnAuthority("127.0.0.1:80", new URL("http://localhost")));
});

Deno.test("mcp http: sessions carry Mcp-Session-Id, belong to their user, and end with DELETE", async () => {
  await withCloud(async (cloud) => {
    const a = await makeUser(cloud, "ada@example.com", "A");
    const b = await makeUser(cloud, "bob@example.com", "B");
    const res = await post(cloud, INIT, { authorization: `Bearer ${a.apiToken}` });
    assertEquals(res.status, 200);
    const sessionId = res.headers.get("mcp-session-id")!;
    const text = await res.text();
    assert(text.includes('"protocolVersion":"2025-06-18"'), text);
    const list = (token: string) =>
      post(cloud, { jsonrpc: "2.0", id: 2, method: "tools/list" }, {
        authorization: `Bearer ${token}`,
        "mcp-session-id": sessionId,
        "mcp-protocol-version": "2025-06-18",
      });
    await post(cloud, { jsonrpc: "2.0", method: "notifications/initialized" }, {
      authorization: `Bearer ${a.apiToken}`,
      "mcp-session-id": sessionId,
      "mcp-protocol-version": "2025-06-18",
    }).then((r) => r.body?.cancel());
    const mine = await list(a.apiToken);
    assertEquals(mine.status, 200);
    assert((await mine.text()).includes("list-gateways"));
    // Another user's token cannot use A's session.
    const theirs = await list(b.apiToken);
    assertEquals(theirs.status, 404);
    await theirs.body?.cancel();
    // A protocol version the server does not speak is refused.
    const badVersion = await post(cloud, { jsonrpc: "2.0", id: 3, method: "tools/list" }, {
      authorization: `Bearer ${a.apiToken}`,
      "mcp-session-id": sessionId,
      "mcp-protocol-version": "1999-01-01",
    });
    assertEquals(badVersion.status, 400);
    await badVersion.body?.cancel();
    const del = await fetch(`${cloud.url}/mcp/cloud`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${a.apiToken}`, "mcp-session-id": sessionId },
    });
    assertEquals(del.status, 200);
    await del.body?.cancel();
    const after = await list(a.apiToken);
    assertEquals(after.status, 404);
    await after.body?.cancel();
  });
});

Deno.test("mcp tools: every tool has a title, description, schemas with field descriptions and annotations; deleting tools are destructive", async () => {
  await withCloud(async (cloud) => {
    const u = await makeUser(cloud, "ada@example.com");
    const mcp = await connectMcp(cloud, u.apiToken);
    try {
      const tools = (await mcp.client.listTools()).tools as Tool[];
      const names = tools.map((t) => t.name);
      for (
        const required of [
          "list-gateways",
          "create-gateway",
          "list-services",
          "create-service",
          "generate-pipeline-toml",
          "generate-gateway-toml",
        ]
      ) assert(names.includes(required), required);
      const kinds = [
        "gateway",
        "pipeline",
        "endpoint",
        "backend",
        "middleware",
        "transform",
        "service",
        "network",
      ];
      for (const k of kinds) {
        for (const verb of ["get", "create", "update", "delete"]) {
          assert(names.includes(`${verb}-${k}`), `${verb}-${k}`);
        }
      }
      assertEquals(tools.length, 8 * 5 + 6 + 3 + 2 + 4 + 3);
      for (const t of tools) {
        const a = t.annotations!;
        assert(t.title && t.description && t.description.length > 30, t.name);
        assert(t.outputSchema?.type === "object", `${t.name}: output schema`);
        assertEquals(typeof a.readOnlyHint, "boolean", `${t.name}: readOnlyHint`);
        assertEquals(typeof a.destructiveHint, "boolean", `${t.name}: destructiveHint`);
        assertEquals(typeof a.idempotentHint, "boolean", `${t.name}: idempotentHint`);
        for (const [field, schema] of Object.entries(t.inputSchema.properties ?? {})) {
          assert(
            typeof (schema as { description?: string }).description === "string",
            `${t.name}.${field} has no description`,
          );
        }
        // A rollback takes pipelines off a running gateway: destructive too.
        const deletes = /^(delete|detach|revoke|rollback)-/.test(t.name);
        assertEquals(a.destructiveHint, deletes, `${t.name}: destructiveHint`);
        if (deletes || t.name.startsWith("create-") || t.name.startsWith("update-")) {
          assertEquals(a.readOnlyHint, false, `${t.name}: readOnlyHint`);
        }
        if (/^(list|get|generate|validate|preview)-/.test(t.name)) {
          assertEquals(a.readOnlyHint, true, `${t.name}: readOnlyHint`);
        }
      }
    } finally {
      await mcp.close();
    }
  });
});

Deno.test("mcp http: GET opens the session's SSE stream; idle sessions are closed", async () => {
  await withCloud(async (cloud) => {
    const u = await makeUser(cloud, "ada@example.com");
    const auth = { authorization: `Bearer ${u.apiToken}` };
    const open = async () => {
      const res = await post(cloud, INIT, auth);
      await res.body?.cancel();
      return res.headers.get("mcp-session-id")!;
    };
    const first = await open();
    const stream = await fetch(`${cloud.url}/mcp/cloud`, {
      headers: {
        ...auth,
        accept: "text/event-stream",
        "mcp-session-id": first,
        "mcp-protocol-version": "2025-06-18",
      },
    });
    assertEquals(stream.status, 200);
    assertEquals(stream.headers.get("content-type"), "text/event-stream");
    await stream.body?.cancel();
    const ping = () =>
      post(cloud, { jsonrpc: "2.0", id: 2, method: "ping" }, {
        ...auth,
        "mcp-session-id": first,
        "mcp-protocol-version": "2025-06-18",
      });
    const alive = await ping();
    assertEquals(alive.status, 200);
    await alive.body?.cancel();
    // 31 minutes later, opening a session sweeps the idle one.
    cloud.clock.advance(31 * 60_000);
    await open();
    const stale = await ping();
    assertEquals(stale.status, 404);
    await stale.body?.cancel();
  });
});
