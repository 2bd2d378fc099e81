/**
 * The HTTP data plane against software we did not write: curl as the client (HTTP/1.1, h2c with
 * prior knowledge, HTTP/2 over TLS with ALPN) and nginx as the upstream of an `http` backend.
 */
import { assertEquals, assertMatch } from "./assert.ts";
import { makeSelfSignedCert } from "./certs.ts";
import { freeTcpPort, startTestGateway } from "./harness.ts";
import { hasPeer } from "./support/mod.ts";

const ECHO = `
[endpoints.echo]
service = "http"
[endpoints.echo.options]
path_prefix = "/echo"
[backends.echo]
service = "echo"
[pipelines.echo]
endpoints = ["echo"]
backends = ["echo"]
`;

async function curl(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await new Deno.Command("curl", { args: ["-sS", ...args], stdout: "piped", stderr: "piped" })
    .output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

Deno.test({
  name: "curl: HTTP/1.1 and h2c prior knowledge reach the echo pipeline",
  ignore: !hasPeer("curl", "curl", "curl"),
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
  ignore: !hasPeer("curl", "curl", "curl") || !hasPeer("openssl", "openssl", "openssl"),
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

/** Start Debian's nginx on loopback with a server block; returns its port and a stop function. */
async function startNginx(serverBlock: (port: number) => string) {
  const dir = await Deno.makeTempDir({ prefix: "nginx-" });
  const port = freeTcpPort();
  const conf = `
worker_processes 1;
error_log ${dir}/error.log warn;
pid ${dir}/nginx.pid;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  ${serverBlock(port)}
}`;
  await Deno.writeTextFile(`${dir}/nginx.conf`, conf);
  const child = new Deno.Command("nginx", {
    args: ["-p", dir, "-c", `${dir}/nginx.conf`, "-g", "daemon off;"],
    stdout: "null",
    stderr: "piped",
  }).spawn();
  for (let i = 0; i < 100; i++) {
    try {
      const c = await Deno.connect({ hostname: "127.0.0.1", port });
      c.close();
      break;
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return {
    port,
    async stop() {
      child.kill("SIGQUIT");
      await child.output().catch(() => {});
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}

Deno.test({
  name: "nginx as the upstream of an http backend: status, headers, body, forwarded headers",
  ignore: !hasPeer("nginx", "nginx", "nginx-light"),
  fn: async () => {
    const nginx = await startNginx((port) => `
  server {
    listen 127.0.0.1:${port};
    location /status/ { return 418 '{"teapot":true}'; }
    location / {
      default_type application/json;
      add_header X-Upstream nginx;
      return 200 '{"uri":"$request_uri","xff":"$http_x_forwarded_for","proto":"$http_x_forwarded_proto","method":"$request_method"}';
    }
  }`);
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
