/**
 * The `http3` backend against Caddy (Debian package caddy) serving HTTP/3 on loopback with a
 * certificate of a private CA (made with openssl; the backend trusts the CA, reaches Caddy by
 * address with `server_name`, and sends a bearer token where Caddy asks for one): Caddy proxies to a local upstream that echoes what it received and
 * serves a large file, so GET and POST bodies, large responses and concurrency are checked end to
 * end, and Caddy reports the protocol it spoke (HTTP/3.0).
 */
import { deepEqual, equal } from "node:assert/strict";
import { createHttp3Backend, type Http3Backend } from "../gateway/backends/http3/mod.ts";
import { backendConfig, buildContext, call, envelope } from "./http3_support.ts";
import { startTestGateway, startUpstream } from "./harness.ts";
import { freeDualPort, sha256 } from "./http3_support.ts";
import { makeTestCa, requirePeer, spawnCaptured, waitReady } from "./support/mod.ts";
import { Http3Client } from "../gateway/http3/mod.ts";

const hasCaddy = requirePeer("http3 backend against Caddy", "caddy", "caddy");

Deno.test({
  name: "http3 backend: GET, POST, large and concurrent requests through Caddy over HTTP/3",
  ignore: !hasCaddy,
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "h3-caddy-" });
    const ca = await makeTestCa(dir, "hospital");
    const cert = await ca.server("caddy");
    const large = crypto.getRandomValues(new Uint8Array(65536));
    const file = new Uint8Array(6 * 1024 * 1024);
    for (let i = 0; i < file.length; i += large.length) file.set(large, i);
    await Deno.mkdir(`${dir}/www/files`, { recursive: true });
    await Deno.writeFile(`${dir}/www/files/big.bin`, file);
    const upstream = startUpstream(async (req, body) => {
      const u = new URL(req.url);
      if (u.pathname.endsWith("/slow")) await new Promise((r) => setTimeout(r, 3000));
      return Response.json({
        method: req.method,
        path: u.pathname,
        query: u.search,
        proto: req.headers.get("x-caddy-proto"),
        length: body.length,
        sha256: await sha256(body),
        type: req.headers.get("content-type"),
      });
    });
    const port = freeDualPort();
    await Deno.writeTextFile(
      `${dir}/Caddyfile`,
      `{
  admin off
  auto_https off
  servers {
    protocols h1 h2 h3
  }
}
https://localhost:${port}, https://127.0.0.1:${port} {
  bind 127.0.0.1
  tls ${cert.certPath} ${cert.keyPath}
  handle /base/secure/* {
    @anonymous not header Authorization "Bearer h3-secret"
    respond @anonymous 401
    reverse_proxy 127.0.0.1:${upstream.port} {
      header_up X-Caddy-Proto {http.request.proto}
    }
  }
  handle_path /base/files/* {
    root * ${dir}/www/files
    file_server
  }
  handle {
    reverse_proxy 127.0.0.1:${upstream.port} {
      header_up X-Caddy-Proto {http.request.proto}
    }
  }
}
`,
    );
    const caddy = spawnCaptured("caddy", ["run", "--config", `${dir}/Caddyfile`], {
      env: { HOME: dir, XDG_DATA_HOME: dir, XDG_CONFIG_HOME: dir },
    });
    await waitReady(caddy, {
      name: "caddy",
      description: `caddy answering HTTP/3 on udp/${port}`,
      timeoutMs: 15_000,
      intervalMs: 100,
      check: async () => {
        try {
          const c = await Http3Client.connect({
            hostname: "127.0.0.1",
            port,
            serverName: "localhost",
            caCerts: [await Deno.readTextFile(ca.certPath)],
            idleTimeoutMs: 500,
          });
          c.close();
          return true;
        } catch {
          return false;
        }
      },
    });
    const gw = await startTestGateway(`
[endpoints.api]
service = "http"
options = { path_prefix = "/api" }

[backends.caddy]
service = "http3"
options = { host = "localhost", port = ${port}, base_path = "/base", ca_cert_path = "${ca.certPath}", timeout_secs = 1 }

[endpoints.secure]
service = "http"
options = { path_prefix = "/secure" }

[backends.secure]
service = "http3"
[backends.secure.options]
host = "127.0.0.1"
server_name = "localhost"
port = ${port}
base_path = "/base/secure"
ca_cert_path = "${ca.certPath}"
auth = { type = "bearer", token = "h3-secret" }

[pipelines.p]
endpoints = ["api"]
backends = ["caddy"]

[pipelines.s]
endpoints = ["secure"]
backends = ["secure"]
`);
    try {
      // GET with a query.
      const get = await fetch(`${gw.url}/api/items?x=1&y=2`);
      equal(get.status, 200);
      const g = await get.json();
      deepEqual(
        { method: g.method, path: g.path, query: g.query, proto: g.proto, length: g.length },
        { method: "GET", path: "/base/items", query: "?x=1&y=2", proto: "HTTP/3.0", length: 0 },
      );

      // POST with a 3 MiB body (streamed through the gateway and Caddy).
      const body = crypto.getRandomValues(new Uint8Array(65536));
      const big = new Uint8Array(3 * 1024 * 1024);
      for (let i = 0; i < big.length; i += body.length) big.set(body, i);
      const post = await fetch(`${gw.url}/api/upload`, {
        method: "POST",
        body: big,
        headers: { "content-type": "application/octet-stream" },
      });
      equal(post.status, 200);
      const p = await post.json();
      equal(p.method, "POST");
      equal(p.length, big.length);
      equal(p.sha256, await sha256(big));
      equal(p.proto, "HTTP/3.0");

      // A JSON body.
      const json = await fetch(`${gw.url}/api/json`, {
        method: "POST",
        body: JSON.stringify({ a: 1 }),
        headers: { "content-type": "application/json" },
      });
      const j = await json.json();
      equal(j.length, 7);
      equal(j.type, "application/json");

      // A large response: Caddy's file server.
      const res = await fetch(`${gw.url}/api/files/big.bin`);
      equal(res.status, 200);
      const got = new Uint8Array(await res.arrayBuffer());
      equal(got.length, file.length);
      equal(await sha256(got), await sha256(file));

      // 50 concurrent requests through the gateway.
      const results = await Promise.all(
        Array.from(
          { length: 50 },
          (_, i) =>
            fetch(`${gw.url}/api/c/${i}`).then(async (r) => ({
              status: r.status,
              ...(await r.json()),
            })),
        ),
      );
      for (const [i, r] of results.entries()) {
        equal(r.status, 200);
        equal(r.path, `/base/c/${i}`);
      }

      // Caddy wants a bearer token under /base/secure: the backend's auth sends it.
      const anonymous = await fetch(`${gw.url}/api/secure/x`);
      equal(anonymous.status, 401);
      await anonymous.body?.cancel();
      const secure = await fetch(`${gw.url}/secure/x`, {
        headers: { authorization: "Bearer nope" },
      });
      equal(secure.status, 200, await secure.clone().text());
      const sj = await secure.json();
      equal(sj.path, "/base/secure/x");
      equal(sj.proto, "HTTP/3.0");

      // The backend itself: 100 concurrent calls share one pooled QUIC connection.
      const backend = await createHttp3Backend(backendConfig(port, ca.certPath), buildContext());
      try {
        const calls = await Promise.all(Array.from({ length: 100 }, async (_, i) => {
          const res = await backend.invoke(envelope(`/n/${i}`), call());
          return JSON.parse(await res.body.text());
        }));
        equal(calls.filter((c, i) => c.path === `/base/n/${i}`).length, 100);
        deepEqual((backend as Http3Backend).connectionsOpened(), { caddy: 1 });
      } finally {
        await backend.close();
      }

      // Timeout: the upstream takes 3 s, timeout_secs is 1: 504, JSON.
      const slow = await fetch(`${gw.url}/api/slow`);
      equal(slow.status, 504);
      equal((await slow.json()).error.code, "backend_timeout");
    } finally {
      await gw.stop();
      await caddy.stop();
      await upstream.stop();
      await Deno.remove(dir, { recursive: true });
    }
  },
});
