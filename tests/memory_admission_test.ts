/**
 * Memory admission (gateway/memory): bodies read whole into memory to be parsed or transformed
 * are counted against a budget per isolate, and the requests that do not fit get 503
 * `memory_pressure` with `Retry-After`, so that one flood of large JSON bodies cannot take an
 * isolate's heap, and with it the whole process, past its limit. Before it, twelve 9.9 MB bodies
 * through a JOLT `sort` with a 128 MB heap ended in "Fatal JavaScript out of memory".
 */
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { startTestGateway, startUpstream } from "./harness.ts";
import { parseExposition, sampleValue } from "./support/metrics.ts";
import { freePort, startGateway, tempDir, waitFor } from "./support/mod.ts";

/** A JSON array of objects with unsorted keys, just over `bytes` long. */
function jsonBody(bytes: number): Uint8Array<ArrayBuffer> {
  const items: unknown[] = [];
  let size = 2;
  for (let i = 0; size < bytes; i++) {
    const item = { z: i, y: `v${i}`, x: [i, i + 1], w: { b: 1, a: "abcdefghij" } };
    size += JSON.stringify(item).length + 1;
    items.push(item);
  }
  return new TextEncoder().encode(JSON.stringify(items));
}

const SORT = JSON.stringify([{ operation: "sort" }]);

Deno.test({
  name:
    "memory admission: 12 concurrent 9.9 MB bodies through a JOLT sort with a 128 MB heap: 503 for the excess, the process stays up",
  // The gateway runs as its own process: its heap is capped, the test's is not.
  sanitizeResources: false,
  fn: async () => {
    const upstream = startUpstream(() => new Response("ok"));
    const transforms = await tempDir("gw-memory-");
    await Deno.writeTextFile(`${transforms}/sort.json`, SORT);
    const port = freePort();
    const mgmtPort = freePort();
    const gw = await startGateway({
      v8Flags: ["--max-old-space-size=128"],
      configText: `
transforms_path = "${transforms}"
[network.main]
bind = "127.0.0.1"
port = ${port}
[management]
bind = "127.0.0.1"
port = ${mgmtPort}
[logging]
level = "warn"
[runtime]
workers = 2
[endpoints.api]
service = "http"
[endpoints.api.options]
path_prefix = "/api"
[backends.up]
service = "http"
[backends.up.options]
base_url = "${upstream.url}"
[middleware.sort]
type = "transform"
[middleware.sort.options]
spec_path = "sort.json"
[pipelines.api]
endpoints = ["api"]
middleware = ["sort"]
backends = ["up"]
`,
    });
    try {
      const body = jsonBody(9_900_000);
      assert(body.byteLength < 10_485_760, "within the default max_body_size");
      const answers = await Promise.all(
        Array.from({ length: 12 }, async () => {
          const res = await fetch(`${gw.dataUrl(port)}/api/sort`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body,
          });
          const text = await res.text();
          return { status: res.status, retryAfter: res.headers.get("retry-after"), text };
        }),
      );
      const statuses = answers.map((a) => a.status);
      assert(statuses.every((s) => s === 200 || s === 503), `200 or 503 only: ${statuses}`);
      const refused = answers.filter((a) => a.status === 503);
      assert(refused.length > 0, "the excess is refused");
      assert(statuses.includes(200), "what fits is served");
      for (const a of refused) {
        assertEquals(a.retryAfter, "1");
        assertEquals(JSON.parse(a.text).error.code, "memory_pressure");
      }
      // The process is still there, and serves a small request and its management API.
      const small = await fetch(`${gw.dataUrl(port)}/api/sort`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ b: 2, a: 1 }),
      });
      assertEquals([small.status, await small.text()], [200, "ok"]);
      const healthz = await fetch(`${gw.mgmtUrl}/healthz`);
      assertEquals(healthz.status, 200);
      await healthz.body?.cancel();
      assert(!gw.output().includes("out of memory"), gw.output());

      // Heap gauges per isolate; the budget is 1/8 of each isolate's heap limit, all given back.
      const metrics = parseExposition(await (await gw.mgmtFetch("/metrics")).text());
      for (const isolate of ["0", "1"]) {
        const used = sampleValue(metrics, "gateway_heap_used_bytes", { worker: isolate })!;
        const limit = sampleValue(metrics, "gateway_heap_limit_bytes", { worker: isolate })!;
        assert(used > 0 && used < limit, `isolate ${isolate}: heap ${used} of ${limit}`);
        assert(limit > 128e6 && limit < 160e6, `isolate ${isolate}: the capped limit (${limit})`);
        assertEquals(
          sampleValue(metrics, "gateway_buffered_body_budget_bytes", { worker: isolate }),
          Math.floor(limit / 8),
        );
        assertEquals(sampleValue(metrics, "gateway_buffered_body_bytes", { worker: isolate }), 0);
      }
      assertEquals(
        sampleValue(metrics, "gateway_errors_total", { code: "memory_pressure" }),
        refused.length,
      );
    } finally {
      await gw.stop();
      await upstream.stop();
      await Deno.remove(transforms, { recursive: true });
    }
  },
});

Deno.test("memory admission: a streamed upload goes on while the budget is full; the budget frees at the request's end", async () => {
  // The transform pipeline's upstream holds its first request until released.
  const release = Promise.withResolvers<void>();
  const held = Promise.withResolvers<void>();
  let holding = true;
  const upstream = startUpstream(async () => {
    if (holding) {
      holding = false;
      held.resolve();
      await release.promise;
    }
    return new Response("ok");
  });
  const gw = await startTestGateway(
    `
transforms_path = "{DIR}/transforms"
[runtime]
max_buffered_bytes = 1000000
[endpoints.sorted]
service = "http"
[endpoints.sorted.options]
path_prefix = "/sorted"
[endpoints.plain]
service = "http"
[endpoints.plain.options]
path_prefix = "/plain"
[backends.up]
service = "http"
[backends.up.options]
base_url = "${upstream.url}"
[middleware.sort]
type = "transform"
[middleware.sort.options]
spec_path = "sort.json"
[pipelines.sorted]
endpoints = ["sorted"]
middleware = ["sort"]
backends = ["up"]
[pipelines.plain]
endpoints = ["plain"]
backends = ["up"]
`,
    // One isolate: the budget is per isolate.
    { workers: 1, files: { "transforms/sort.json": SORT } },
  );
  const buffered = async () => {
    const text = await (await gw.mgmtFetch("/metrics")).text();
    return sampleValue(parseExposition(text), "gateway_buffered_body_bytes", { worker: "0" });
  };
  const post = (path: string, body: Uint8Array<ArrayBuffer>, type = "application/json") =>
    fetch(`${gw.url}${path}`, { method: "POST", headers: { "content-type": type }, body });
  try {
    const big = jsonBody(800_000);
    const first = post("/sorted/a", big);
    await held.promise;
    // The first body is held (counted by its declared length) while its upstream works.
    assertEquals(await buffered(), big.byteLength);

    const refused = await post("/sorted/b", big);
    assertEquals(refused.status, 503);
    assertEquals(refused.headers.get("retry-after"), "1");
    const error = (await refused.json()).error;
    assertEquals(error.code, "memory_pressure");
    assertMatch(error.message, /1000000 bytes per isolate/);

    // A 5 MB upload no middleware reads streams through: never counted, never refused.
    const upload = new Uint8Array(5_000_000).fill(7);
    const streamed = await post("/plain/c", upload, "application/octet-stream");
    assertEquals([streamed.status, await streamed.text()], [200, "ok"]);
    assertEquals(upstream.received.at(-1)!.body.byteLength, upload.byteLength);
    assertEquals(await buffered(), big.byteLength);

    release.resolve();
    const answered = await first;
    assertEquals([answered.status, await answered.text()], [200, "ok"]);
    await waitFor(async () => (await buffered()) === 0, {
      timeoutMs: 10_000,
      description: "the first request's bytes given back",
    });
    const retried = await post("/sorted/b", big);
    assertEquals([retried.status, await retried.text()], [200, "ok"]);
    // What reached the upstream is the sorted body.
    const sent = JSON.parse(new TextDecoder().decode(upstream.received.at(-1)!.body));
    assertEquals(Object.keys(sent[0]), ["w", "x", "y", "z"]);
  } finally {
    release.resolve();
    await gw.stop();
    await upstream.stop();
  }
});
