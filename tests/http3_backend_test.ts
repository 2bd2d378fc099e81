/**
 * The `http3` backend on its own: reconnection after the pooled connection is lost (the server's
 * idle timeout kills it without GOAWAY), 502 when nothing answers, 504 on the option timeout.
 */
import { deepEqual, equal } from "node:assert/strict";
import { createHttp3Backend, type Http3Backend } from "../gateway/backends/http3/mod.ts";
import { Http3Server } from "../gateway/http3/mod.ts";
import {
  backendConfig,
  buildContext,
  call,
  envelope,
  freeUdpPort,
  makeH3Cert,
} from "./http3_support.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

async function withServer(
  idleTimeoutMs: number,
  fn: (server: Http3Server, caPath: string) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "h3-backend-" });
  const cert = await makeH3Cert(dir);
  const server = new Http3Server({
    hostname: "127.0.0.1",
    port: 0,
    cert: cert.cert,
    key: cert.key,
    idleTimeoutMs,
    handler: async (req) => {
      const path = new URL(req.url).pathname;
      if (path.endsWith("/slow")) await new Promise((r) => setTimeout(r, 1500));
      return Response.json({ path });
    },
  });
  try {
    await fn(server, cert.certPath);
  } finally {
    await server.shutdown(100);
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test({
  ...opts,
  name: "http3 backend: a lost connection is replaced on the next request",
  fn: () =>
    withServer(300, async (server, caPath) => {
      const backend = await createHttp3Backend(
        backendConfig(server.addr.port, caPath),
        buildContext(),
      ) as Http3Backend;
      try {
        const a = await backend.invoke(envelope("/a"), call());
        equal(JSON.parse(await a.body.text()).path, "/base/a");
        // Idle timeout 300 ms (below the 1 s keep-alive): the connection dies without GOAWAY.
        await new Promise((r) => setTimeout(r, 800));
        const b = await backend.invoke(envelope("/b"), call());
        equal(b.status, 200);
        equal(JSON.parse(await b.body.text()).path, "/base/b");
        deepEqual(backend.connectionsOpened(), { caddy: 2 });
      } finally {
        backend.close();
      }
    }),
});

Deno.test({
  ...opts,
  name: "http3 backend: 504 JSON after the option timeout_secs",
  fn: () =>
    withServer(30_000, async (server, caPath) => {
      const backend = await createHttp3Backend(
        backendConfig(server.addr.port, caPath, { timeout_secs: 1 }),
        buildContext(),
      );
      try {
        const started = performance.now();
        const err = await backend.invoke(envelope("/slow"), call()).catch((e) => e);
        equal(err.status, 504);
        equal(err.code, "backend_timeout");
        // The option's 1 s was waited (a timer never fires early; a busy machine only makes it
        // later, so no upper bound): the 504 itself shows it ended before the 1.5 s answer.
        const took = performance.now() - started;
        equal(took >= 900, true, `took ${took} ms`);
      } finally {
        backend.close();
      }
    }),
});

Deno.test({
  ...opts,
  name: "http3 backend: 502 when nothing listens on the UDP port",
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "h3-backend-" });
    const cert = await makeH3Cert(dir);
    const backend = await createHttp3Backend(
      { ...backendConfig(freeUdpPort(), cert.certPath), retries: 0 },
      buildContext(),
    );
    try {
      const err = await backend.invoke(envelope("/x"), call()).catch((e) => e);
      equal(err.status, 502);
      equal(err.code, "backend_unavailable");
    } finally {
      backend.close();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test("http3 backend: an unreadable ca_cert_path fails the build with its path", async () => {
  const err = await createHttp3Backend(
    backendConfig(443, "/nonexistent/ca.pem"),
    buildContext(),
  ).catch((e) => e);
  equal(String(err.message).includes("/nonexistent/ca.pem"), true);
});
