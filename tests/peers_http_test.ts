/**
 * The HTTP data plane against software we did not write: curl as the client (HTTP/1.1, h2c with
 * prior knowledge, HTTP/2 over TLS with ALPN) and nginx as the upstream of an `http` backend.
 */
import { assertEquals, assertMatch } from "./assert.ts";
import { makeSelfSignedCert } from "./certs.ts";
import { ECHO_PIPELINE, startTestGateway } from "./harness.ts";
import { curl, requirePeer, startNginx } from "./support/mod.ts";

const ECHO = ECHO_PIPELINE;

Deno.test({
  name: "curl: HTTP/1.1 and h2c prior knowledge reach the echo pipeline",
  ignore: !requirePeer("curl", "curl", "curl"),
  fn: async () => {
    const gw = await startTestGateway(ECHO);
    try {
      for (const [flag, version] of [["--http1.1", "1.1"], ["--http2-prior-knowledge", "2"]]) {
        const r = await curl([
          flag,
          "-w",
          "\n%{http_version} %{http_code}",
          "-H",
          "content-type: application/json",
          "-d",
          '{"a":1}',
          `${gw.url}/echo/x?q=1`,
        ]);
        assertEquals(r.code, 0, r.stderr);
        const [json, status] = r.stdout.split("\n");
        assertEquals(status, `${version} 200`);
        const body = JSON.parse(json);
        assertEquals(body.data, { a: 1 });
        assertEquals(body.query, { q: "1" });
      }
    } finally {
      await gw.stop();
    }
  },
});

Deno.test({
  name: "curl: HTTP/2 over TLS with ALPN",
  ignore: !requirePeer("curl", "curl", "curl") || !requirePeer("openssl", "openssl", "openssl"),
  fn: async () => {
    const dir = await Deno.makeTempDir();
    const cert = await makeSelfSignedCert(dir);
    const gw = await startTestGateway(ECHO, { tls: cert, dir });
    try {
      const r = await curl([
        "--http2",
        "--cacert",
        cert.certPath,
        "-w",
        "\n%{http_version} %{http_code}",
        `https://localhost:${gw.dataPort}/echo/tls`,
      ]);
      assertEquals(r.code, 0, r.stderr);
      const [json, status] = r.stdout.split("\n");
      assertEquals(status, "2 200");
      assertEquals(JSON.parse(json).path, "/tls");
      const r1 = await curl([
        "--http1.1",
        "--cacert",
        cert.certPath,
        "-w",
        "\n%{http_version}",
        `https://localhost:${gw.dataPort}/echo/tls`,
      ]);
      assertMatch(r1.stdout, /\n1\.1$/);
    } finally {
      await gw.stop();
    }
  },
});

Deno.test({
  name: "nginx as the upstream of an http backend: status, headers, body, forwarded headers",
  ignore: !requirePeer("nginx", "nginx", "nginx-light"),
  fn: async () => {
    const nginx = await startNginx({
      conf: `
  server {
    listen 127.0.0.1:{{port}};
    location /v1/status/ { return 418 '{"teapot":true}'; }
    location / {
      default_type application/json;
      add_header X-Upstream nginx;
      return 200 '{"uri":"$request_uri","xff":"$http_x_forwarded_for","proto":"$http_x_forwarded_proto","method":"$request_method"}';
    }
  }`,
    });
    const gw = await startTestGateway(`
[endpoints.api]
service = "http"
[endpoints.api.options]
path_prefix = "/api"
[backends.nginx]
service = "http"
[backends.nginx.options]
base_url = "http://127.0.0.1:${nginx.port}/v1"
[pipelines.api]
endpoints = ["api"]
backends = ["nginx"]
`);
    try {
      const res = await fetch(`${gw.url}/api/patients?name=a&name=b`, { method: "DELETE" });
      assertEquals(res.status, 200);
      assertEquals(res.headers.get("x-upstream"), "nginx");
      assertEquals(await res.json(), {
        uri: "/v1/patients?name=a&name=b",
        xff: "127.0.0.1",
        proto: "http",
        method: "DELETE",
      });
      const teapot = await fetch(`${gw.url}/api/status/x`);
      assertEquals(teapot.status, 418);
      assertEquals(await teapot.text(), '{"teapot":true}');
    } finally {
      await gw.stop();
      await nginx.stop();
    }
  },
});

Deno.test({
  name:
    "nginx behind balanced targets and a base_url sees the client's Content-Length, never chunked framing",
  ignore: !requirePeer("nginx", "nginx", "nginx-light"),
  fn: async () => {
    const conf = `
  server {
    listen 127.0.0.1:{{port}};
    client_max_body_size 8m;
    location / {
      default_type application/json;
      return 200 '{"te":"$http_transfer_encoding","cl":"$content_length"}';
    }
  }`;
    const a = await startNginx({ conf });
    const b = await startNginx({ conf });
    const gw = await startTestGateway(`
[endpoints.lb]
service = "http"
[endpoints.lb.options]
path_prefix = "/lb"
[endpoints.one]
service = "http"
[endpoints.one.options]
path_prefix = "/one"
[targets.a]
url = "http://127.0.0.1:${a.port}"
[targets.b]
url = "http://127.0.0.1:${b.port}"
[backends.balanced]
service = "http"
targets = ["a", "b"]
[backends.single]
service = "http"
[backends.single.options]
base_url = "http://127.0.0.1:${a.port}"
[pipelines.lb]
endpoints = ["lb"]
backends = ["balanced"]
[pipelines.one]
endpoints = ["one"]
backends = ["single"]
`);
    try {
      // Small bodies are read ahead, large ones stream: both keep their length.
      for (const size of [1_000, 3 * 1024 * 1024]) {
        for (const prefix of ["lb", "lb", "one"]) {
          const body = new Uint8Array(size).fill(120);
          const res = await fetch(`${gw.url}/${prefix}/upload`, {
            method: "POST",
            headers: { "content-type": "application/octet-stream" },
            body,
          });
          assertEquals(res.status, 200);
          assertEquals(await res.json(), { te: "", cl: String(size) }, `${prefix} ${size}`);
        }
      }
      // A client that sends chunked stays chunked (no length to keep).
      const stream = new Blob([new Uint8Array(200_000)]).stream();
      const res = await fetch(`${gw.url}/lb/upload`, {
        method: "POST",
        headers: { "content-type": "application/octet-stream" },
        body: stream,
      });
      assertEquals((await res.json()).te, "chunked");
    } finally {
      await gw.stop();
      await a.stop();
      await b.stop();
    }
  },
});
