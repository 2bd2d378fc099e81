/**
 * `ip_filter` end to end: curl straight to the gateway (its address is 127.0.0.1), and nginx as a
 * real reverse proxy in front of it that appends the client to X-Forwarded-For. Only a trusted
 * proxy's header counts; a client cannot pick its address by sending the header itself.
 */
import { assertEquals } from "./assert.ts";
import { startTestGateway } from "./harness.ts";
import { curl, requirePeer, startNginx } from "./support/mod.ts";

function pipeline(filter: string): string {
  return `
[endpoints.api]
service = "http"
[endpoints.api.options]
path_prefix = "/api"

[middleware.filter]
type = "ip_filter"
[middleware.filter.options]
${filter}

[backends.echo]
service = "echo"

[pipelines.api]
endpoints = ["api"]
middleware = ["filter"]
backends = ["echo"]
`;
}

/** Status and body of a curl GET. */
async function get(url: string, headers: string[] = []) {
  const r = await curl(["-s", "-w", "\n%{http_code}", ...headers.flatMap((h) => ["-H", h]), url]);
  assertEquals(r.code, 0, r.stderr);
  const cut = r.stdout.lastIndexOf("\n");
  return { status: Number(r.stdout.slice(cut + 1)), body: JSON.parse(r.stdout.slice(0, cut)) };
}

Deno.test({
  name: "ip_filter: curl direct, and nginx as the trusted proxy naming the client",
  ignore: !requirePeer("curl", "curl", "curl") || !requirePeer("nginx", "nginx", "nginx-light"),
  fn: async () => {
    // Loopback is the only real client address here: allow it, deny it, and behind nginx.
    const gw = await startTestGateway(pipeline(`allow = ["10.0.0.0/8"]`));
    try {
      const url = `${gw.url}/api/x`;
      const denied = await get(url);
      assertEquals([denied.status, denied.body.error.code], [403, "ip_denied"]);
      // Without trusted proxies the header is the client's own claim: ignored.
      assertEquals((await get(url, ["X-Forwarded-For: 10.1.2.3"])).status, 403);

      await gw.writeConfig(pipeline(`allow = ["127.0.0.0/8", "::1"]\ndeny = ["203.0.113.0/24"]`));
      assertEquals((await gw.mgmtFetch("/api/reload", { method: "POST" })).status, 200);
      const direct = await get(url, ["X-Forwarded-For: 203.0.113.7"]);
      assertEquals([direct.status, direct.body.metadata["client.ip"]], [200, "127.0.0.1"]);

      // nginx in front, trusted: the address it appends is the client's.
      await gw.writeConfig(pipeline(
        `allow = ["127.0.0.0/8", "198.51.100.0/24"]\ndeny = ["203.0.113.0/24"]\n` +
          `trusted_proxies = ["127.0.0.1"]`,
      ));
      assertEquals((await gw.mgmtFetch("/api/reload", { method: "POST" })).status, 200);
      const nginx = await startNginx({
        conf: `server {
  listen 127.0.0.1:{{port}};
  location / {
    proxy_pass ${gw.url};
    proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
  }
}`,
      });
      try {
        const via = `${nginx.url}/api/x`;
        const plain = await get(via);
        assertEquals([plain.status, plain.body.metadata["client.ip"]], [200, "127.0.0.1"]);
        // A chain from further out: nginx appends 127.0.0.1 (trusted), so the hop before is the client.
        const outer = await get(via, ["X-Forwarded-For: 198.51.100.4"]);
        assertEquals([outer.status, outer.body.metadata["client.ip"]], [200, "198.51.100.4"]);
        const bad = await get(via, ["X-Forwarded-For: 203.0.113.7"]);
        assertEquals([bad.status, bad.body.error.code], [403, "ip_denied"]);
      } finally {
        await nginx.stop();
      }
    } finally {
      await gw.stop();
    }
  },
});
