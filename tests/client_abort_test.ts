/**
 * A client that goes away stops the work done for it: the slow-client guard's per-connection
 * signal (shared/net/guarded_listener.ts) reaches the handler, and through the gateway the
 * backend call, whose upstream connection is closed at once instead of at the backend timeout.
 */
import { assert, assertEquals } from "./assert.ts";
import { clientSignalOf, DEFAULT_GUARD, guardedServe } from "../shared/net/mod.ts";
import { freePort, startGateway } from "./support/mod.ts";

/** Connects, sends a request head, and closes after `ms`. */
async function requestAndLeave(port: number, path: string, ms: number): Promise<void> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  await conn.write(new TextEncoder().encode(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`));
  await new Promise((resolve) => setTimeout(resolve, ms));
  conn.close();
}

Deno.test("guarded server: a handler's client signal aborts when the client leaves, once per connection", async () => {
  const aborted = Promise.withResolvers<string>();
  const signals: AbortSignal[] = [];
  const server = guardedServe(
    { hostname: "127.0.0.1", port: 0, guard: DEFAULT_GUARD },
    (req, info) => {
      const signal = clientSignalOf(info)!;
      signals.push(signal);
      if (new URL(req.url).pathname === "/fast") return new Response("ok");
      return new Promise<Response>((resolve) => {
        signal.addEventListener("abort", () => {
          aborted.resolve((signal.reason as DOMException).name);
          resolve(new Response("gone"));
        });
      });
    },
  );
  try {
    // Two requests on one keep-alive connection share one signal.
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
    assertEquals(signals.length, 2);
    assert(signals[0] === signals[1], "one signal per connection");
    assert(!signals[0].aborted);
    conn.close();

    await requestAndLeave(server.addr.port, "/slow", 100);
    assertEquals(await aborted.promise, "AbortError");
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
