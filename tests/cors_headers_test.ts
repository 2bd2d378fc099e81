/**
 * `cors` in Chromium (a page on one origin calling the gateway on another, with a header that
 * needs a preflight; a page on an origin not listed is kept from the answer) and with curl (the
 * preflight answered by the gateway, refusals named); `headers` with curl, and nginx as the
 * backend whose `Server` header is stripped.
 */
import { chromium } from "playwright-core";
import { assert, assertEquals } from "./assert.ts";
import { startTestGateway } from "./harness.ts";
import { curl, findBinary, requirePeer, startNginx } from "./support/mod.ts";

const HAS_CHROMIUM = requirePeer("chromium", "chromium", "chromium");

/** A page server: its origin is http://127.0.0.1:<port>. */
function pageServer(): { origin: string; stop(): Promise<void> } {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    () =>
      new Response("<!doctype html><title>app</title>", {
        headers: { "content-type": "text/html" },
      }),
  );
  return { origin: `http://127.0.0.1:${server.addr.port}`, stop: () => server.shutdown() };
}

function corsPipeline(origin: string): string {
  return `
[endpoints.api]
service = "http"
[endpoints.api.options]
path_prefix = "/api"

[middleware.cors]
type = "cors"
[middleware.cors.options]
allow_origins = ["${origin}"]
allow_headers = ["authorization", "x-api-key"]
expose_headers = ["x-request-id"]

[backends.echo]
service = "echo"

[pipelines.api]
endpoints = ["api"]
middleware = ["cors"]
backends = ["echo"]
`;
}

Deno.test({
  name: "cors: Chromium pages on an allowed and a foreign origin; curl preflights",
  ignore: !HAS_CHROMIUM || !requirePeer("curl", "curl", "curl"),
  fn: async () => {
    const app = pageServer();
    const foreign = pageServer();
    const gw = await startTestGateway(corsPipeline(app.origin));
    const profile = await Deno.makeTempDir({ prefix: "cors-chromium-" });
    const browser = await chromium.launchPersistentContext(profile, {
      executablePath: findBinary("chromium")!,
      headless: true,
      args: ["--no-sandbox", "--disable-background-networking", "--no-first-run"],
    });
    try {
      const page = browser.pages()[0] ?? await browser.newPage();
      const call = (target: string) =>
        page.evaluate(async (url) => {
          try {
            const res = await fetch(url, {
              method: "POST",
              headers: { "content-type": "application/json", "x-api-key": "k" },
              body: JSON.stringify({ a: 1 }),
            });
            const body = await res.json();
            return { status: res.status, requestId: res.headers.get("x-request-id"), body };
          } catch (err) {
            return { error: String(err) };
          }
        }, target);
      await page.goto(app.origin);
      const ok = await call(`${gw.url}/api/orders`) as {
        status: number;
        requestId: string | null;
        body: { data: unknown; headers: Record<string, string> };
      };
      assertEquals(ok.status, 200, JSON.stringify(ok));
      assertEquals(ok.body.data, { a: 1 });
      assertEquals(ok.body.headers.origin, app.origin);
      assert(ok.requestId, "x-request-id is exposed to the page");

      await page.goto(foreign.origin);
      const blocked = await call(`${gw.url}/api/orders`) as { error?: string };
      assert(blocked.error?.includes("Failed to fetch"), JSON.stringify(blocked));

      // The preflights as curl sees them: answered by the gateway, refusals named.
      const preflight = (origin: string, method: string, headers: string) =>
        curl([
          "-s",
          "-i",
          "-X",
          "OPTIONS",
          "-H",
          `Origin: ${origin}`,
          "-H",
          `Access-Control-Request-Method: ${method}`,
          "-H",
          `Access-Control-Request-Headers: ${headers}`,
          `${gw.url}/api/orders`,
        ]);
      const good = (await preflight(app.origin, "POST", "x-api-key")).stdout;
      assert(good.startsWith("HTTP/1.1 204"), good);
      assert(good.includes(`access-control-allow-origin: ${app.origin}`), good);
      assert(good.includes("access-control-allow-headers: x-api-key"), good);
      for (
        const [origin, method, headers, why] of [
          [foreign.origin, "POST", "x-api-key", `origin ${foreign.origin} is not allowed`],
          [app.origin, "TRACE", "x-api-key", "method TRACE is not allowed"],
          [app.origin, "POST", "x-secret", "header x-secret is not allowed"],
        ]
      ) {
        const r = (await preflight(origin, method, headers)).stdout;
        assert(r.startsWith("HTTP/1.1 403"), r);
        assert(r.includes(`CORS preflight refused: ${why}`), r);
      }
    } finally {
      await browser.close();
      await Deno.remove(profile, { recursive: true }).catch(() => {});
      await gw.stop();
      await app.stop();
      await foreign.stop();
    }
  },
});

Deno.test({
  name: "headers: set, remove and forward metadata to the backend; strip nginx's Server header",
  ignore: !requirePeer("curl", "curl", "curl") || !requirePeer("nginx", "nginx", "nginx-light"),
  fn: async () => {
    const nginx = await startNginx({
      conf: `server {
  listen 127.0.0.1:{{port}};
  location / { add_header X-Upstream yes; return 200 "{\\"ok\\":true}"; }
}`,
    });
    const gw = await startTestGateway(`
[endpoints.echo]
service = "http"
[endpoints.echo.options]
path_prefix = "/echo"
[endpoints.up]
service = "http"
[endpoints.up.options]
path_prefix = "/up"

[middleware.rules]
type = "headers"
[middleware.rules.options]
request_remove = ["cookie"]
response_remove = ["server"]
[middleware.rules.options.request_set]
x-gateway = "edge-1"
[middleware.rules.options.request_from_metadata]
x-endpoint = "endpoint"
x-authenticated-user = "auth.subject"
[middleware.rules.options.response_set]
strict-transport-security = "max-age=31536000"

[backends.echo]
service = "echo"
[backends.nginx]
service = "http"
[backends.nginx.options]
base_url = "${nginx.url}"

[pipelines.echo]
endpoints = ["echo"]
middleware = ["rules"]
backends = ["echo"]
[pipelines.up]
endpoints = ["up"]
middleware = ["rules"]
backends = ["nginx"]
`);
    try {
      const echoed = await curl([
        "-s",
        "-H",
        "Cookie: session=1",
        "-H",
        "X-Authenticated-User: mallory",
        `${gw.url}/echo/x`,
      ]);
      const seen = JSON.parse(echoed.stdout).headers;
      assertEquals(seen.cookie, undefined);
      assertEquals(seen["x-gateway"], "edge-1");
      assertEquals(seen["x-endpoint"], "echo");
      // No authentication ran: the client's own claim is removed, not passed on.
      assertEquals(seen["x-authenticated-user"], undefined);

      const direct = await curl(["-s", "-i", `${nginx.url}/`]);
      assert(/\r\nserver: nginx/i.test(direct.stdout), "nginx names itself");
      const proxied = await curl(["-s", "-i", `${gw.url}/up/x`]);
      assert(!/\r\nserver:/i.test(proxied.stdout), proxied.stdout);
      assert(/\r\nx-upstream: yes/i.test(proxied.stdout), proxied.stdout);
      assert(
        /\r\nstrict-transport-security: max-age=31536000/i.test(proxied.stdout),
        proxied.stdout,
      );
    } finally {
      await gw.stop();
      await nginx.stop();
    }
  },
});
