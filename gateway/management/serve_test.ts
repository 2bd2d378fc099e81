import assert from "node:assert/strict";
import { createManagementApp, MAX_BODY_BYTES } from "./mod.ts";
import {
  fakeControl,
  memoryLogger,
  TEST_GUARD,
  TEST_TOKEN,
} from "../../tests/support/management.ts";

const AUTH = { authorization: `Bearer ${TEST_TOKEN}` };

function serve() {
  const { control, state } = fakeControl();
  const app = createManagementApp(control, memoryLogger().logger, {
    ...TEST_GUARD,
    allowedHosts: () => ["gw.hospital.example"],
  });
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, app.fetch);
  return { server, state, base: `http://127.0.0.1:${server.addr.port}` };
}

/** One raw HTTP/1.1 request (to send a Host header that fetch would not). */
async function raw(port: number, head: string): Promise<string> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    await conn.write(new TextEncoder().encode(head));
    const chunks: Uint8Array[] = [];
    for await (const c of conn.readable) chunks.push(c);
    return new TextDecoder().decode(new Uint8Array(chunks.flatMap((c) => [...c])));
  } catch {
    return "";
  }
}

// The same app behind a real Deno.serve socket, as the runtime serves it.
Deno.test("the app behind Deno.serve: routes, 405, 413 and request ids over HTTP", async () => {
  const { server, base } = serve();
  try {
    const info = await fetch(`${base}/admin/info`, {
      headers: { "X-Request-Id": "sock-1", ...AUTH },
    });
    assert.equal(info.status, 200);
    assert.equal(info.headers.get("x-request-id"), "sock-1");
    assert.equal((await info.json()).management.prefix, "admin");

    const wrong = await fetch(`${base}/admin/info`, {
      method: "POST",
      headers: { ...AUTH, "content-type": "application/json" },
    });
    assert.equal(wrong.status, 405);
    assert.equal(wrong.headers.get("allow"), "GET, HEAD");
    assert.equal((await wrong.json()).error.code, "method_not_allowed");

    const big = await fetch(`${base}/admin/token`, {
      method: "POST",
      headers: { ...AUTH, "content-type": "application/json" },
      body: new Uint8Array(MAX_BODY_BYTES + 1),
    });
    assert.equal(big.status, 413);
    assert.equal((await big.json()).error.code, "payload_too_large");

    const metrics = await fetch(`${base}/metrics`, { headers: AUTH });
    assert.equal(metrics.status, 200);
    assert.match(await metrics.text(), /^# TYPE gateway_requests_total counter$/m);
  } finally {
    await server.shutdown();
  }
});

Deno.test("management guard: every route but /healthz and /readyz needs the bearer token", async () => {
  const { server, base, state } = serve();
  try {
    for (const path of ["/healthz", "/readyz"]) {
      const open = await fetch(`${base}${path}`);
      assert.equal(open.status, 200, path);
      await open.body?.cancel();
    }
    const routes: [string, string][] = [
      ["GET", "/admin/info"],
      ["GET", "/admin/pipelines"],
      ["GET", "/admin/routes"],
      ["GET", "/metrics"],
      ["POST", "/api/reload"],
      ["POST", "/admin/token"],
      ["POST", "/admin/authorize"],
      ["POST", "/admin/update"],
    ];
    for (const [method, path] of routes) {
      for (
        const authorization of [undefined, "Bearer wrong-token", `Basic ${btoa("a:b")}`, TEST_TOKEN]
      ) {
        const res = await fetch(`${base}${path}`, {
          method,
          headers: {
            "content-type": "application/json",
            ...(authorization ? { authorization } : {}),
          },
          body: method === "POST" ? "{}" : undefined,
        });
        assert.equal(res.status, 401, `${method} ${path} with ${authorization}`);
        assert.match(res.headers.get("www-authenticate") ?? "", /^Bearer /);
        assert.equal((await res.json()).error.code, "unauthorized");
      }
    }
    assert.deepEqual(state.reloads, [], "no reload ran");
  } finally {
    await server.shutdown();
  }
});

Deno.test("management guard: browser requests (Origin) and foreign Host names are refused", async () => {
  const { server, base, state } = serve();
  try {
    // A page the operator visits posts to the API: the browser adds Origin (also `null`).
    for (const origin of ["https://evil.example", "null", "http://127.0.0.1:9090"]) {
      const res = await fetch(`${base}/api/reload`, {
        method: "POST",
        headers: { ...AUTH, "content-type": "application/json", origin },
      });
      assert.equal(res.status, 403, origin);
      assert.equal((await res.json()).error.code, "origin_not_allowed");
    }
    assert.deepEqual(state.reloads, []);

    const port = server.addr.port;
    const ask = (host: string) =>
      raw(
        port,
        `GET /healthz HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${TEST_TOKEN}\r\n` +
          "Connection: close\r\n\r\n",
      );
    // DNS rebinding: the attacker's name now resolves to 127.0.0.1.
    const rebound = await ask(`attacker.example:${port}`);
    assert.match(rebound, /^HTTP\/1\.1 403/);
    assert.match(rebound, /host_not_allowed/);
    for (
      const host of [`127.0.0.1:${port}`, `localhost:${port}`, "[::1]:9090", "gw.hospital.example"]
    ) {
      assert.match(await ask(host), /^HTTP\/1\.1 200/, host);
    }
  } finally {
    await server.shutdown();
  }
});

Deno.test("management guard: POST needs Content-Type application/json; a text/plain token post is not applied", async () => {
  const { server, base, state } = serve();
  try {
    // What a cross-origin "simple request" (no preflight) could send.
    for (const type of ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data"]) {
      const res = await fetch(`${base}/admin/token`, {
        method: "POST",
        headers: { ...AUTH, "content-type": type },
        body: JSON.stringify({ machine_token: "x.y.z", gateway_code: "gw" }),
      });
      assert.equal(res.status, 415, type);
      assert.equal((await res.json()).error.code, "unsupported_media_type");
    }
    const none = await fetch(`${base}/api/reload`, { method: "POST", headers: AUTH });
    assert.equal(none.status, 415);
    await none.body?.cancel();
    assert.deepEqual(state.reloads, []);
    const ok = await fetch(`${base}/api/reload`, {
      method: "POST",
      headers: { ...AUTH, "content-type": "application/json; charset=utf-8" },
    });
    assert.equal(ok.status, 200);
    await ok.body?.cancel();
    assert.deepEqual(state.reloads, ["api"]);
  } finally {
    await server.shutdown();
  }
});
