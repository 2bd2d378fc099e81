/** The client against Debian's nginx, a real HTTP/1.1 peer (`apt-get install nginx-light`). */

import { assert, assertEquals } from "../../../tests/assert.ts";
import { type NginxProcess, requirePeer, startNginx } from "../../../tests/support/mod.ts";
import {
  pattern,
  patternStream,
  send,
  type ServeUpstream,
  serveUpstream,
  sha256,
  testClient,
} from "../../../tests/support/http1_servers.ts";

const ignore = !requirePeer("nginx", "nginx", "nginx-light");

/** nginx with keepalive_requests 100, a `$content_length` echo and a proxy to `upstream`. */
function startPeer(upstream: ServeUpstream, keepaliveTimeout = "75s"): Promise<NginxProcess> {
  return startNginx({
    conf: `server {
    listen 127.0.0.1:{{port}};
    keepalive_requests 100;
    keepalive_timeout ${keepaliveTimeout};
    client_max_body_size 64m;
    client_body_buffer_size 16m;
    location = /hello {
      default_type text/plain;
      return 200 "hello $request_method";
    }
    location = /length {
      default_type text/plain;
      return 200 "$content_length";
    }
    location /up/ {
      proxy_pass ${upstream.url}/;
      proxy_http_version 1.1;
    }
  }`,
  });
}

/** Hashes what reached it through nginx and reports the framing nginx used upstream. */
function hashingUpstream(): ServeUpstream {
  return serveUpstream(async (req) => {
    const body = new Uint8Array(await req.arrayBuffer());
    return Response.json({
      length: body.length,
      sha: await sha256(body),
      contentLength: req.headers.get("content-length"),
    });
  });
}

Deno.test({
  name: "nginx: 500 sequential keep-alive requests across keepalive_requests=100, none fails",
  ignore,
  fn: async () => {
    const upstream = hashingUpstream();
    const nginx = await startPeer(upstream);
    const client = testClient();
    try {
      for (let i = 0; i < 500; i++) {
        const method = ["GET", "HEAD", "POST"][i % 3];
        const body = method === "POST" ? new TextEncoder().encode(`request ${i}`) : null;
        const res = await send(client, `${nginx.url}/hello`, { method, body });
        assertEquals(res.status, 200, `request ${i}`);
        if (method === "HEAD") assertEquals(res.body, null);
        else assertEquals(await res.text(), `hello ${method}`, `request ${i}`);
      }
      // nginx says `connection: close` on each socket's 100th answer: 5 sockets, no retry needed.
      assertEquals(client.stats.connects, 5, JSON.stringify(client.stats));
    } finally {
      await client.close();
      await nginx.stop();
      await upstream.stop();
    }
  },
});

Deno.test({
  name: "nginx: idle sockets closed by keepalive_timeout never fail a request",
  ignore,
  fn: async () => {
    const upstream = hashingUpstream();
    const nginx = await startPeer(upstream, "100ms");
    const client = testClient();
    try {
      for (let i = 0; i < 40; i++) {
        assertEquals(await (await send(client, `${nginx.url}/hello`)).text(), "hello GET");
        await new Promise((resolve) => setTimeout(resolve, [0, 50, 95, 100, 105, 150][i % 6]));
      }
      assert(client.stats.connects > 1, "nginx should have closed idle sockets");
    } finally {
      await client.close();
      await nginx.stop();
      await upstream.stop();
    }
  },
});

Deno.test({
  name: "nginx: a 5 MiB POST body is framed by content-length and arrives intact",
  ignore,
  fn: async () => {
    const upstream = hashingUpstream();
    const nginx = await startPeer(upstream);
    const client = testClient();
    try {
      const body = pattern(5 * 1024 * 1024);
      // `return` answers before reading the body (nginx then discards it): that is fine.
      const length = await send(client, `${nginx.url}/length`, { method: "POST", body });
      assertEquals(await length.text(), String(body.length));
      const proxied = await send(client, `${nginx.url}/up/store`, { method: "POST", body });
      const seen = await proxied.json();
      assertEquals([seen.length, seen.sha], [body.length, await sha256(body)]);
      // The socket is still good for the next request.
      assertEquals(await (await send(client, `${nginx.url}/hello`)).text(), "hello GET");
    } finally {
      await client.close();
      await nginx.stop();
      await upstream.stop();
    }
  },
});

Deno.test({
  name: "nginx: a chunked upload is accepted and de-chunked",
  ignore,
  fn: async () => {
    const upstream = hashingUpstream();
    const nginx = await startPeer(upstream);
    const client = testClient();
    try {
      const size = 3 * 1024 * 1024 + 5;
      for (let i = 0; i < 3; i++) {
        const res = await send(client, `${nginx.url}/up/chunked`, {
          method: "PUT",
          body: patternStream(size, 50_000),
        });
        assertEquals(res.status, 200);
        const seen = await res.json();
        assertEquals([seen.length, seen.contentLength], [size, String(size)]);
        assertEquals(seen.sha, await sha256(pattern(size)));
      }
      assertEquals(client.stats.connects, 1);
    } finally {
      await client.close();
      await nginx.stop();
      await upstream.stop();
    }
  },
});
