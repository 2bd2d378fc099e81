/**
 * A client that goes away stops the work done for it: through the slow-client guard and the
 * request's signal, the backend call ends and its upstream connection is closed at once instead
 * of at the backend timeout.
 */
import { assert } from "./assert.ts";
import { freePort, startGateway } from "./support/mod.ts";

/** Connects, sends a request head, and closes after `ms`. */
async function requestAndLeave(port: number, path: string, ms: number): Promise<void> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  await conn.write(new TextEncoder().encode(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`));
  await new Promise((resolve) => setTimeout(resolve, ms));
  conn.close();
}

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
