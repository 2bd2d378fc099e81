/**
 * Passive health never empties a backend by itself: a backend with one `base_url` that timed out
 * `max_failures` times is still tried (before, every request got 502 `no_healthy_target` for
 * `cooldown_secs`), while among several targets a failing one is still taken out.
 */
import { assertEquals } from "./assert.ts";
import { startTestGateway, type TestUpstream } from "./harness.ts";

/** An upstream that answers its name, or holds the request while `hang()` says so. */
function upstream(name: string, hang: () => boolean) {
  const waiting: (() => void)[] = [];
  let hits = 0;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async () => {
    hits++;
    if (hang()) await new Promise<void>((resolve) => waiting.push(resolve));
    return new Response(name);
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    hits: () => hits,
    async stop() {
      for (const release of waiting) release();
      await server.shutdown();
    },
  } satisfies Partial<TestUpstream> & Record<string, unknown>;
}

/** `GET /api/` through the gateway: status and error code (or body). */
async function get(url: string): Promise<[number, string]> {
  const res = await fetch(`${url}/api/`);
  const text = await res.text();
  return [res.status, res.status >= 400 ? JSON.parse(text).error.code : text];
}

const pipeline = (backend: string) => `
[endpoints.api]
service = "http"
[endpoints.api.options]
path_prefix = "/api"
${backend}
[pipelines.api]
endpoints = ["api"]
backends = ["up"]
`;

Deno.test("passive health: a single base_url that timed out 3 times is still tried", async () => {
  let hanging = true;
  const up = upstream("up", () => hanging);
  // One isolate: passive health is per worker.
  const gw = await startTestGateway(
    pipeline(`
[backends.up]
service = "http"
timeout_secs = 0.3
retries = 0
[backends.up.options]
base_url = "${up.url}"
`),
    { workers: 1 },
  );
  try {
    for (let i = 0; i < 3; i++) assertEquals(await get(gw.url), [504, "backend_timeout"]);
    hanging = false;
    assertEquals(await get(gw.url), [200, "up"]);
    assertEquals(up.hits(), 4);
    const kept = gw.logs.map((l) => JSON.parse(l)).filter((l) =>
      l.msg === "target failing, kept in rotation: it is the last one"
    );
    assertEquals(kept.length, 1);
    assertEquals(gw.logs.some((l) => l.includes("target marked down")), false);
  } finally {
    await gw.stop();
    await up.stop();
  }
});

Deno.test("passive health: among several targets, one that timed out 3 times is taken out", async () => {
  const a = upstream("a", () => true);
  const b = upstream("b", () => false);
  const gw = await startTestGateway(
    pipeline(`
[targets.a]
url = "${a.url}"
[targets.b]
url = "${b.url}"
[backends.up]
service = "http"
targets = ["a", "b"]
timeout_secs = 0.3
retries = 0
cooldown_secs = 30
`),
    { workers: 1 },
  );
  try {
    const seen: string[] = [];
    // Round robin: a, b, a, b, a: the third timeout on a takes it out.
    for (let i = 0; i < 5; i++) seen.push((await get(gw.url)).join(" "));
    assertEquals(seen.sort(), [
      "200 b",
      "200 b",
      "504 backend_timeout",
      "504 backend_timeout",
      "504 backend_timeout",
    ]);
    assertEquals(a.hits(), 3);
    for (let i = 0; i < 4; i++) assertEquals(await get(gw.url), [200, "b"]);
    assertEquals(a.hits(), 3, "a is out of rotation");
    assertEquals(gw.logs.some((l) => l.includes("target marked down")), true);
  } finally {
    await gw.stop();
    await a.stop();
    await b.stop();
  }
});
