/**
 * `[runtime] workers`: several data-plane isolates on the same ports. Connections spread over
 * them; the rate limit, the per-address connection cap, /metrics, the audit trail and the delivery
 * queues stay one; a reload switches every isolate; SIGTERM drains each.
 */
import { assert, assertEquals } from "./assert.ts";
import { startHeldUpstream, startTestGateway, startUpstream } from "./harness.ts";
import { verifyAuditFiles } from "../gateway/audit/mod.ts";
import {
  fetchFresh,
  freePort,
  requirePeer,
  startGateway,
  startNginx,
  waitFor,
} from "./support/mod.ts";

const HAS_NGINX = requirePeer("nginx", "nginx", "nginx");

/**
 * Isolates of the spread test: more than the cores of a small CI machine, on purpose (every one
 * still gets connections and the shared state stays one).
 */
const SPREAD_WORKERS = 3;
/**
 * Isolates of the other gateways below, whose claim is "across isolates" (a cap, a queue, a
 * reload, a drain held by more than one): two prove it, and each isolate costs ~0.5 s of CPU to
 * load the module graph.
 */
const WORKERS = 2;

/** `/admin/workers` of a test gateway. */
async function workers(
  gw: { mgmtFetch(path: string): Promise<Response> },
): Promise<{ index: number; generation: number; requests: number }[]> {
  return (await (await gw.mgmtFetch("/admin/workers")).json()).workers;
}

Deno.test({
  name:
    "workers: connections spread over every isolate; the rate limit, /metrics and the audit chain are one",
  ignore: !HAS_NGINX,
  fn: async () => {
    await using nginx = await startNginx({
      conf: `server {
  listen 127.0.0.1:{{port}};
  location / { default_type application/json; return 200 '{"ok":true}'; }
}`,
    });
    const gw = await startTestGateway(
      `[audit]
file = "{DIR}/audit/audit.jsonl"
flush_interval_ms = 50
[endpoints.api]
service = "http"
[endpoints.api.options]
path_prefix = "/api"
[middleware.limit]
type = "rate_limit"
[middleware.limit.options]
requests_per_second = 0.001
burst = 40
key = "client_ip"
[backends.up]
service = "http"
[backends.up.options]
base_url = "${nginx.url}"
[pipelines.main]
endpoints = ["api"]
middleware = ["limit"]
backends = ["up"]
`,
      { workers: SPREAD_WORKERS, logLevel: "warn" },
    );
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 80; i++) {
        statuses.push((await fetchFresh(`${gw.url}/api/patients?i=${i}`)).status);
      }
      // One bucket of 40 for the address, whichever isolate each connection landed on.
      assertEquals(statuses.filter((s) => s === 200).length, 40);
      assertEquals(statuses.filter((s) => s === 429).length, 40);

      const list = await workers(gw);
      assertEquals(list.map((w) => w.index), [0, 1, 2]);
      for (const w of list) {
        assert(w.requests > 0, `isolate ${w.index} served nothing: ${JSON.stringify(list)}`);
      }
      assertEquals(list.reduce((n, w) => n + w.requests, 0), 80);

      const metrics = await (await gw.mgmtFetch("/metrics")).text();
      assert(metrics.includes('gateway_requests_total{pipeline="main",status="200"} 40'), metrics);
      assert(metrics.includes('gateway_errors_total{code="rate_limited"} 40'), metrics);
      assert(
        metrics.includes(
          'gateway_backend_requests_total{pipeline="main",backend="up",outcome="ok"} 40',
        ),
      );

      // Every isolate's records in the one chained file.
      await waitFor(async () => {
        const text = await Deno.readTextFile(`${gw.dir}/audit/audit.jsonl`).catch(() => "");
        return text.trim().split("\n").filter((l) => l.includes('"event":"request"')).length === 80;
      }, { timeoutMs: 5_000, description: "80 audit records" });
      const report = await verifyAuditFiles([`${gw.dir}/audit/audit.jsonl`]);
      assert(report.ok, report.lines.join("\n"));

      const routes = (await (await gw.mgmtFetch("/admin/routes")).json()).routes;
      assertEquals([routes[0].served_by, routes[0].workers], ["all_workers", SPREAD_WORKERS]);
    } finally {
      await gw.stop();
    }
  },
});

Deno.test("workers: the per-address connection cap holds across isolates", async () => {
  const gw = await startTestGateway(
    `[endpoints.echo]\nservice = "http"\n[endpoints.echo.options]\npath_prefix = "/echo"\n` +
      `[backends.echo]\nservice = "echo"\n[pipelines.p]\nendpoints = ["echo"]\nbackends = ["echo"]\n`,
    { workers: WORKERS, network: "max_connections_per_ip = 4\n", logLevel: "warn" },
  );
  const conns: Deno.TcpConn[] = [];
  try {
    const enc = new TextEncoder();
    let answered = 0;
    for (let i = 0; i < 12; i++) {
      const conn = await Deno.connect({ hostname: "127.0.0.1", port: gw.dataPort });
      conns.push(conn);
      // Keep-alive: an answered connection stays open and counted.
      await conn.write(enc.encode("GET /echo/x HTTP/1.1\r\nHost: x\r\n\r\n")).catch(() => {});
      const buf = new Uint8Array(8192);
      const n = await conn.read(buf).catch(() => null);
      if (n && new TextDecoder().decode(buf.subarray(0, n)).startsWith("HTTP/1.1 200")) answered++;
    }
    assertEquals(answered, 4);
  } finally {
    for (const c of conns) {
      try {
        c.close();
      } catch {
        // closed by the gateway
      }
    }
    await gw.stop();
  }
});

/**
 * The queue and the reload claims share one gateway of two isolates (its worker isolate costs
 * ~0.35 s of CPU to start): the queued pipeline under `/in` first, then the reload of the echo
 * route (the queued pipeline is reloaded with it, unchanged).
 */
Deno.test("workers: queued requests go through the main thread's queue; a reload switches every isolate", async (t) => {
  const upstream = startUpstream(() => new Response(null, { status: 201 }));
  const route = (prefix: string) =>
    `[endpoints.api]\nservice = "http"\n[endpoints.api.options]\npath_prefix = "${prefix}"\n` +
    `[backends.echo]\nservice = "echo"\n[pipelines.p]\nendpoints = ["api"]\nbackends = ["echo"]\n` +
    `[endpoints.queued]
service = "http"
[endpoints.queued.options]
path_prefix = "/in"
[backends.lab]
service = "http"
[backends.lab.options]
base_url = "${upstream.url}"
[backends.lab.queue]
dir = "{DIR}/queue"
[pipelines.q]
endpoints = ["queued"]
backends = ["lab"]
`;
  const gw = await startTestGateway(route("/one"), { workers: WORKERS, logLevel: "warn" });
  try {
    const queued = await t.step(
      "queued requests from every isolate go through the main thread's queue",
      async () => {
        const ids = new Set<string>();
        for (let i = 0; i < 30; i++) {
          const res = await fetchFresh(`${gw.url}/in/obs?n=${i}`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ n: i }),
          });
          assertEquals(res.status, 202, res.text);
          ids.add(JSON.parse(res.text).delivery_id);
        }
        assertEquals(ids.size, 30);
        assert((await workers(gw)).every((w) => w.requests > 0));
        await waitFor(() => Promise.resolve(upstream.received.length === 30), {
          timeoutMs: 10_000,
          description: "the queue delivered 30 messages",
        });
        const bodies = upstream.received.map((r) => JSON.parse(new TextDecoder().decode(r.body)).n);
        assertEquals(bodies.sort((a, b) => a - b), Array.from({ length: 30 }, (_, i) => i));
        assert(upstream.received.every((r) => new URL(r.url).search.startsWith("?n=")));
      },
    );
    const reloaded = await t.step(
      "a reload switches every isolate; a refused one switches none",
      async () => {
        const text = await Deno.readTextFile(gw.configFile);
        await Deno.writeTextFile(
          gw.configFile,
          text.replace('path_prefix = "/one"', 'path_prefix = "/two"'),
        );
        const ok = await (await gw.mgmtFetch("/api/reload", { method: "POST" })).json();
        assertEquals(ok.ok, true, JSON.stringify(ok));
        assertEquals((await workers(gw)).map((w) => w.generation), Array(WORKERS).fill(2));
        for (let i = 0; i < 30; i++) {
          assertEquals((await fetchFresh(`${gw.url}/two/x`)).status, 200);
          assertEquals((await fetchFresh(`${gw.url}/one/x`)).status, 404);
        }
        await Deno.writeTextFile(
          gw.configFile,
          text.replace('service = "echo"', 'service = "nosuch"'),
        );
        const refused = await gw.mgmtFetch("/api/reload", { method: "POST" });
        assertEquals(refused.status, 422);
        await refused.body?.cancel();
        assertEquals((await workers(gw)).map((w) => w.generation), Array(WORKERS).fill(2));
        for (let i = 0; i < 10; i++) {
          assertEquals((await fetchFresh(`${gw.url}/two/x`)).status, 200);
        }
      },
    );
    assert(queued && reloaded, "both steps passed");
  } finally {
    await gw.stop();
    await upstream.stop();
  }
});

Deno.test("workers: SIGTERM lets in-flight requests of every isolate finish, then exits 0", async () => {
  // Held until the drain has begun: all twelve are in flight at the SIGTERM.
  const upstream = startHeldUpstream(() => new Response("done"));
  const port = freePort();
  const gw = await startGateway({
    configText:
      `[network.main]\nbind = "127.0.0.1"\nport = ${port}\n[management]\nport = ${freePort()}\n` +
      `[runtime]\nworkers = ${WORKERS}\n[endpoints.api]\nservice = "http"\n` +
      `[endpoints.api.options]\npath_prefix = "/slow"\n[backends.up]\nservice = "http"\n` +
      `[backends.up.options]\nbase_url = "${upstream.url}"\n` +
      `[pipelines.p]\nendpoints = ["api"]\nbackends = ["up"]\n`,
  });
  try {
    assertEquals((await workers(gw)).length, WORKERS);
    const inFlight = Array.from(
      { length: 12 },
      () => fetchFresh(`http://127.0.0.1:${port}/slow/x`),
    );
    await waitFor(() => Promise.resolve(upstream.received.length === 12), {
      timeoutMs: 10_000,
      description: "12 requests at the upstream",
    });
    gw.process.kill("SIGTERM");
    await waitFor(() => Promise.resolve(/draining in-flight requests/.test(gw.output())), {
      timeoutMs: 10_000,
      description: "the drain begun",
    });
    upstream.release();
    const answers = await Promise.all(inFlight);
    assertEquals(answers.map((a) => [a.status, a.text]), answers.map(() => [200, "done"]));
    const status = await gw.process.status;
    assertEquals(status.code, 0, gw.output());
    assert(gw.output().includes(`"workers":${WORKERS}`), gw.output());
  } finally {
    await gw.stop();
    await upstream.stop();
  }
});
