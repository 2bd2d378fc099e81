import assert from "node:assert/strict";
import { nginxConfig, startNginx } from "./nginx.ts";
import { requirePeer } from "./peers.ts";

const hasNginx = requirePeer("nginx tests", "nginx", "nginx-light");

Deno.test("nginxConfig: logs and temp files stay in the prefix dir, placeholders are filled", () => {
  const text = nginxConfig(
    "/tmp/x",
    4321,
    "server { listen 127.0.0.1:{{port}}; root {{dir}}; }",
    "",
  );
  assert.match(text, /error_log \/tmp\/x\/error\.log/);
  assert.match(text, /client_body_temp_path \/tmp\/x\/client_body;/);
  assert.match(text, /listen 127\.0\.0\.1:4321; root \/tmp\/x;/);
  assert.doesNotMatch(text, /\{\{/);
});

Deno.test({
  name: "startNginx: serves a fixed body and proxies to another nginx",
  ignore: !hasNginx,
  async fn() {
    await using upstream = await startNginx({
      conf: `server {
        listen 127.0.0.1:{{port}};
        location / { default_type application/json; return 200 '{"ok":true}'; }
      }`,
    });
    const direct = await fetch(`${upstream.url}/anything`);
    assert.equal(direct.headers.get("content-type"), "application/json");
    assert.deepEqual(await direct.json(), { ok: true });

    await using proxy = await startNginx({
      conf: `upstream up { server 127.0.0.1:${upstream.port}; keepalive 8; }
      server {
        listen 127.0.0.1:{{port}};
        location / { proxy_pass http://up; proxy_http_version 1.1; proxy_set_header Connection ""; }
      }`,
    });
    const proxied = await fetch(`${proxy.url}/x`);
    assert.deepEqual(await proxied.json(), { ok: true });
    await proxy.stop();
    await assert.rejects(Deno.stat(proxy.dir), Deno.errors.NotFound);
  },
});

Deno.test({
  name: "startNginx: a broken config rejects with nginx's error message",
  ignore: !hasNginx,
  async fn() {
    await assert.rejects(
      startNginx({ conf: "server { listen 127.0.0.1:{{port}}; no_such_directive on; }" }),
      { message: /unknown directive "no_such_directive"/ },
    );
  },
});
