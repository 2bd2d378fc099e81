/**
 * The watchdog of the data-plane workers (issue 34): a worker whose event loop is frozen (blocked
 * on purpose through the test hook) is logged, shown unhealthy in /admin/workers and /metrics,
 * makes /readyz fail, and past the kill threshold is replaced with its listening socket shut down,
 * so that no new connection lands on the frozen thread. The shutdown log counts the in-flight
 * requests of every isolate.
 */
import { assert, assertEquals } from "./assert.ts";
import { ECHO_PIPELINE, startTestGateway, startUpstream, type TestGateway } from "./harness.ts";
import { fetchFresh, waitFor, withTestHooks } from "./support/mod.ts";

/** Isolates: the main thread and two worker threads. */
const WORKERS = 3;
const MISS_MS = 400;
const KILL_MS = 3_000;
/**
 * The longest worker 1 may stay frozen: the test releases it when its checks are done, so this is
 * only a bound for a test that never gets there.
 */
const BLOCK_MS = 120_000;

/** `/admin/workers` of a test gateway. */
async function workers(gw: TestGateway): Promise<
  {
    index: number;
    state: string;
    healthy: boolean;
    heartbeat_age_ms: number | null;
    replacements: number;
  }[]
> {
  return (await (await gw.mgmtFetch("/admin/workers")).json()).workers;
}

/** True when a request on a new connection is answered 200 within `ms`. */
async function answered(url: string, ms: number): Promise<boolean> {
  try {
    return (await fetchFresh(url, { signal: AbortSignal.timeout(ms) })).status === 200;
  } catch {
    return false;
  }
}

/**
 * The upstream of pipeline `/slow`: requests wait there until `release` (the shutdown step's
 * requests in flight).
 */
function slowUpstream() {
  const release = Promise.withResolvers<void>();
  let arrived = 0;
  const upstream = startUpstream(async () => {
    arrived++;
    await release.promise;
    return new Response("done");
  });
  return { upstream, release, arrived: () => arrived };
}

const SLOW_PIPELINE = (url: string) =>
  `[endpoints.api]\nservice = "http"\n[endpoints.api.options]\npath_prefix = "/slow"\n` +
  `[backends.up]\nservice = "http"\n[backends.up.options]\nbase_url = "${url}"\n` +
  `[pipelines.p]\nendpoints = ["api"]\nbackends = ["up"]\n`;

/**
 * One gateway of three isolates for both claims: its worker isolates cost ~0.35 s of CPU each to
 * start, and the shutdown's count is a claim about the isolates serving at the stop, whichever
 * gateway they belong to (here the one whose worker 1 was replaced by the watchdog before).
 */
Deno.test("workers: a frozen worker is replaced (watchdog); the shutdown log counts every isolate's requests", async (t) => {
  await withTestHooks(async () => {
    const slow = slowUpstream();
    const gw = await startTestGateway(
      `[runtime]\nwatchdog_miss_ms = ${MISS_MS}\nwatchdog_kill_ms = ${KILL_MS}\n${ECHO_PIPELINE}` +
        SLOW_PIPELINE(slow.upstream.url),
      // The requests in flight at the stop finish within its grace.
      { workers: WORKERS, drainSeconds: 2 },
    );
    let stopped: Promise<void> | undefined;
    try {
      const frozen = await t.step(
        "a frozen worker fails /readyz, shows unhealthy, is replaced, its socket gets no connection",
        () => frozenWorker(gw),
      );
      assert(frozen, "the watchdog step passed");
      await t.step(
        "the shutdown log's in_flight counts the requests of every isolate",
        async () => {
          const requests = Array.from({ length: 12 }, () => fetchFresh(`${gw.url}/slow/x`));
          await waitFor(() => Promise.resolve(slow.arrived() === 12), {
            timeoutMs: 10_000,
            description: "12 requests at the upstream",
          });
          stopped = gw.stop();
          let line: { in_flight?: number } | undefined;
          await waitFor(() => {
            const found = gw.logs.find((l) =>
              l.includes("shutting down: draining in-flight requests")
            );
            if (found) line = JSON.parse(found);
            return Promise.resolve(found !== undefined);
          }, { timeoutMs: 5_000, description: "the shutdown log line" });
          assertEquals(line?.in_flight, 12);
          slow.release.resolve();
          assertEquals((await Promise.all(requests)).map((r) => r.status), Array(12).fill(200));
        },
      );
    } finally {
      slow.release.resolve();
      await (stopped ?? gw.stop());
      await slow.upstream.stop();
    }
  });
});

/** The watchdog's claims on `gw` (three isolates, worker 1 frozen through the test hook). */
async function frozenWorker(gw: TestGateway): Promise<void> {
  await waitFor(async () => (await workers(gw)).every((w) => w.heartbeat_age_ms !== null), {
    timeoutMs: 20_000,
    description: "every worker answered the watchdog",
  });
  const readyz = await gw.mgmtFetch("/readyz");
  assertEquals(readyz.status, 200, await readyz.text());

  const unblock = gw.gateway.blockWorkerForTest(1, BLOCK_MS);
  try {
    let body: { status?: string; unresponsive_workers?: { index: number }[] } = {};
    await waitFor(async () => {
      const res = await gw.mgmtFetch("/readyz");
      body = await res.json();
      return res.status === 503;
    }, { timeoutMs: KILL_MS, description: "/readyz answers 503" });
    assertEquals(body.status, "not_ready");
    assertEquals(body.unresponsive_workers?.map((w) => w.index), [1]);
    const list = await workers(gw);
    assertEquals(list.map((w) => [w.index, w.state, w.healthy]), [
      [0, "serving", true],
      [1, "unresponsive", false],
      [2, "serving", true],
    ]);
    // /metrics does not wait for the frozen worker: it is answered (showing it unresponsive)
    // before the watchdog's kill threshold has replaced it, the order a wait would reverse.
    const metrics = await (await gw.mgmtFetch("/metrics")).text();
    assertEquals((await workers(gw))[1].replacements, 0, "/metrics came before the kill");
    assert(metrics.includes('gateway_worker_unresponsive{worker="1"} 1'), metrics);
    assert(
      gw.logs.some((l) => l.includes("data-plane worker unresponsive") && l.includes('"worker":1')),
      gw.logs.join("\n"),
    );
    // Before the kill the frozen socket still gets its share of new connections: they hang.
    const probes = await Promise.all(
      Array.from({ length: 20 }, () => answered(`${gw.url}/echo/probe`, 500)),
    );
    assert(probes.includes(false), "no connection landed on the frozen worker's socket");

    await waitFor(async () => {
      const w = (await workers(gw))[1];
      return w.state === "serving" && w.replacements === 1;
    }, { timeoutMs: 60_000, description: "worker 1 replaced and serving" });
    assert(
      gw.logs.some((l) =>
        l.includes("unresponsive data-plane worker terminated; a new one starts") &&
        l.includes('"sockets_shut_down":1')
      ),
      gw.logs.join("\n"),
    );
    assertEquals((await gw.mgmtFetch("/readyz")).status, 200);
    assert(
      (await (await gw.mgmtFetch("/metrics")).text()).includes(
        'gateway_worker_replacements_total{reason="unresponsive"} 1',
      ),
    );
    // The old thread is still frozen, and no new connection reaches it.
    for (let i = 0; i < 100; i++) {
      assert(await answered(`${gw.url}/echo/${i}`, 2_000), `connection ${i} was not answered`);
    }
  } finally {
    unblock();
  }
}
