/**
 * A client that goes away stops the work done for it: under the slow-client guard
 * (shared/net/guarded_listener.ts) the runtime still aborts a pending request's signal, and
 * through the gateway the backend call (linked to it once it has lasted 100 ms) closes its
 * upstream connection at once instead of at the backend timeout. And the guard's shutdown: what is in
 * flight finishes, a stalled upload is cut rather than waited for.
 */
import { assert, assertEquals } from "./assert.ts";
import { clientOf, DEFAULT_GUARD, guardedServe } from "../shared/net/mod.ts";
import { freePort, startGateway } from "./support/mod.ts";

/** Connects, sends a request head, and closes after `ms`. */
async function requestAndLeave(port: number, path: string, ms: number): Promise<void> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  await conn.write(new TextEncoder().encode(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`));
  await new Promise((resolve) => setTimeout(resolve, ms));
  conn.close();
}

Deno.test("guarded server: a pending handler's request signal aborts when the client leaves", async () => {
  const aborted = Promise.withResolvers<string>();
  const server = guardedServe(
    { hostname: "127.0.0.1", port: 0, guard: DEFAULT_GUARD },
    (req, info) => {
      assertEquals(info.remoteAddr.hostname, "127.0.0.1");
      if (new URL(req.url).pathname === "/fast") return new Response("ok");
      return new Promise<Response>((resolve) => {
        req.signal.addEventListener("abort", () => {
          aborted.resolve((req.signal.reason as DOMException).name);
          resolve(new Response("gone"));
        });
      });
    },
  );
  try {
    // Two requests on one keep-alive connection.
    const conn = await Deno.connect({ hostname: "127.0.0.1", port: server.addr.port });
    const twice = "GET /fast HTTP/1.1\r\nHost: x\r\n\r\nGET /fast HTTP/1.1\r\nHost: x\r\n\r\n";
    await conn.write(new TextEncoder().encode(twice));
    const buf = new Uint8Array(4096);
    let text = "";
    while ((text.match(/HTTP\/1\.1 200/g) ?? []).length < 2) {
      const n = await conn.read(buf);
      if (n === null) break;
      text += new TextDecoder().decode(buf.subarray(0, n));
    }
    assertEquals((text.match(/HTTP\/1\.1 200/g) ?? []).length, 2);
    conn.close();

    const left = performance.now();
    await requestAndLeave(server.addr.port, "/slow", 100);
    assertEquals(await aborted.promise, "AbortError");
    assert(performance.now() - left < 2_000, "the signal aborted at once");
  } finally {
    await server.shutdown();
  }
});

Deno.test("gateway: a client leaving mid-request closes the backend's upstream connection at once", async () => {
  const upstream = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  // The upstream reads the request and never answers; it notes when the gateway hangs up.
  const hungUp = (async () => {
    const conn = await upstream.accept();
    const buf = new Uint8Array(4096);
    try {
      while ((await conn.read(buf)) !== null) { /* the request, then nothing */ }
    } catch {
      // reset: hung up as well
    }
    return performance.now();
  })();
  const dataPort = freePort();
  const gateway = await startGateway({
    configText: `[network.main]
bind = "127.0.0.1"
port = ${dataPort}

[management]
bind = "127.0.0.1"
port = ${freePort()}

[endpoints.api]
service = "http"
[endpoints.api.options]
path_prefix = "/api"

[backends.slow]
service = "http"
timeout_secs = 60
[backends.slow.options]
base_url = "http://127.0.0.1:${(upstream.addr as Deno.NetAddr).port}"

[pipelines.p]
endpoints = ["api"]
backends = ["slow"]
`,
  });
  try {
    await requestAndLeave(dataPort, "/api/wait", 300);
    const left = performance.now();
    const at = await Promise.race([
      hungUp,
      new Promise<number>((resolve) => setTimeout(() => resolve(Infinity), 10_000)),
    ]);
    assert(at - left < 2_000, `the upstream connection stayed open ${at - left} ms`);
  } finally {
    await gateway.stop();
    upstream.close();
  }
});

Deno.test("guarded server: shutdown lets a request in flight finish, and a stalled upload does not hold it", async () => {
  const server = guardedServe(
    {
      hostname: "127.0.0.1",
      port: 0,
      guard: { headerTimeoutMs: 5_000, idleTimeoutMs: 1_000, maxConnectionsPerIp: 10 },
    },
    async () => {
      await new Promise((r) => setTimeout(r, 500));
      return new Response("done");
    },
  );
  const port = server.addr.port;
  const answer = fetch(`http://127.0.0.1:${port}/slow`).then((r) => r.text());
  await new Promise((r) => setTimeout(r, 100));
  const started = performance.now();
  await server.shutdown();
  assertEquals(await answer, "done");
  assert(performance.now() - started > 300, "shutdown waited for the answer");

  const stalled = guardedServe(
    {
      hostname: "127.0.0.1",
      port: 0,
      guard: { headerTimeoutMs: 5_000, idleTimeoutMs: 1_000, maxConnectionsPerIp: 10 },
    },
    async (req, info) => {
      const body = clientOf(info)!.track(req.body!);
      const bytes = await new Response(body).arrayBuffer().catch(() => null);
      return new Response(bytes === null ? "cut" : "whole");
    },
  );
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: stalled.addr.port });
  await conn.write(
    new TextEncoder().encode("POST /u HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\nhalf"),
  );
  await new Promise((r) => setTimeout(r, 100));
  const shutdownStarted = performance.now();
  await stalled.shutdown();
  const took = performance.now() - shutdownStarted;
  assert(took < 4_000, `a stalled upload held the shutdown ${took.toFixed(0)} ms`);
  conn.close();
});
