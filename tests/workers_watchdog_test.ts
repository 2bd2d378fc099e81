/**
 * The watchdog of the data-plane workers (issue 34): a worker whose event loop is frozen (blocked
 * on purpose through the test hook) is logged, shown unhealthy in /admin/workers and /metrics,
 * makes /readyz fail, and past the kill threshold is replaced with its listening socket shut down,
 * so that no new connection lands on the frozen thread. Deno does not stop the terminated thread
 * (it sleeps in the test hook's block), so it is shown lingering until it ends; past
 * `watchdog_exit_ms` an embedded gateway only logs it, while a process the gateway owns (its main
 * watchdog runs, as in the `gateway` executable) exits 70. The shutdown log counts the in-flight
 * requests of every isolate.
 */
import { assert, assertEquals } from "./assert.ts";
import {
  ECHO_PIPELINE,
  freeTcpPort,
  startTestGateway,
  startUpstream,
  type TestGateway,
} from "./harness.ts";
import { fetchFresh, waitFor, withTestHooks } from "./support/mod.ts";

/** Isolates: the main thread and two worker threads. */
const WORKERS = 3;
const MISS_MS = 400;
const KILL_MS = 3_000;
/** A terminated thread still running this long after is logged (this gateway is embedded). */
const EXIT_MS = 1_000;
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
    lingering_threads?: { thread_id: number; terminated_ms: number }[];
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
      `[runtime]\nwatchdog_miss_ms = ${MISS_MS}\nwatchdog_kill_ms = ${KILL_MS}\n` +
        `watchdog_exit_ms = ${EXIT_MS}\n${ECHO_PIPELINE}` +
        SLOW_PIPELINE(slow.upstream.url),
      // The requests in flight at the stop finish within its grace.
      { workers: WORKERS, drainSeconds: 2 },
    );
    let stopped: Promise<void> | undefined;
    try {
      const frozen = await t.step(
        "a frozen worker fails /readyz, shows unhealthy, is replaced, its socket gets no " +
          "connection; its terminated thread lingers until it ends",
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
    await lingeringThread(gw, unblock);
  } finally {
    unblock();
  }
}

/** The log line of `gw` with `msg` about thread `tid`, once it is there. */
async function logLine(
  gw: TestGateway,
  msg: string,
  tid: number,
): Promise<Record<string, unknown>> {
  let found: Record<string, unknown> | undefined;
  await waitFor(() => {
    found = gw.logs.map((l) => JSON.parse(l)).find((l) => l.msg === msg && l.thread_id === tid);
    return Promise.resolve(found !== undefined);
  }, { timeoutMs: 10_000, description: msg });
  return found!;
}

/**
 * Worker 1's terminated thread (still in the test hook's block) is shown lingering; past
 * `watchdog_exit_ms` it is logged but the embedded gateway's process goes on; released, its end is
 * logged and it is shown no more.
 */
async function lingeringThread(gw: TestGateway, unblock: () => void): Promise<void> {
  const lingering = (await workers(gw))[1].lingering_threads ?? [];
  assertEquals(lingering.length, 1, JSON.stringify(await workers(gw)));
  const tid = lingering[0].thread_id;
  assert(
    gw.logs.some((l) => l.includes("a new one starts") && l.includes(`"thread_id":${tid}`)),
    gw.logs.join("\n"),
  );
  const metrics = async () => (await (await gw.mgmtFetch("/metrics")).text()).split("\n");
  assert((await metrics()).includes("gateway_worker_threads_lingering 1"));
  const overdue = await logLine(
    gw,
    "terminated data-plane worker thread still runs; the process is not the gateway's to end",
    tid,
  );
  assert(Number(overdue.lingered_ms) > EXIT_MS, JSON.stringify(overdue));
  assert(!gw.logs.some((l) => l.includes("are not followed")), gw.logs.join("\n"));

  unblock();
  const ended = await logLine(gw, "terminated data-plane worker thread has ended", tid);
  assertEquals(ended.worker, 1);
  assertEquals((await workers(gw))[1].lingering_threads, undefined);
  assert((await metrics()).includes("gateway_worker_threads_lingering 0"));
}

/**
 * A script running a gateway of two isolates as the `gateway` executable does (its main watchdog
 * runs: the process is its own), with worker 1 frozen through the test hook for 60 s at most (a
 * hang guard: only the watchdog is to end it).
 */
function ownedGatewayScript(dir: string): string {
  const url = (path: string) => new URL(path, import.meta.url).href;
  const config = `[runtime]\nwatchdog_miss_ms = 200\nwatchdog_kill_ms = 400\n` +
    `watchdog_exit_ms = 1500\n${ECHO_PIPELINE}\n[network.main]\nbind = "127.0.0.1"\n` +
    `port = ${freeTcpPort()}\n[management]\nbind = "127.0.0.1"\nport = ${freeTcpPort()}\n`;
  return `
import { Gateway } from "${url("../gateway/runtime/mod.ts")}";
import { createMetrics } from "${url("../gateway/observability/mod.ts")}";
import { Logger } from "${url("../shared/mod.ts")}";
const gateway = new Gateway({
  configText: { text: ${JSON.stringify(config)}, name: ${JSON.stringify(`${dir}/gateway.toml`)} },
  logger: new Logger({ level: "info", format: "json" }),
  metrics: createMetrics(),
  workers: 2,
  mainWatchdog: true,
  env: (name) => name === "GATEWAY_MANAGEMENT_TOKEN" ? "${crypto.randomUUID()}" : Deno.env.get(name),
});
await gateway.start();
while (gateway.workers()[1].heartbeat_age_ms === null) {
  await new Promise((resolve) => setTimeout(resolve, 20));
}
gateway.blockWorkerForTest(1, 60_000);
console.log("worker 1 blocked");
// Nothing here ends the process: the gateway's listeners keep it alive until the watchdog does.
await new Promise(() => {});
`;
}

Deno.test("workers: a terminated thread still running past watchdog_exit_ms ends a process the gateway owns (exit 70)", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gw-lingering-" });
  try {
    await Deno.writeTextFile(`${dir}/script.ts`, ownedGatewayScript(dir));
    const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--allow-all",
        "--node-modules-dir=manual",
        "--unstable-net",
        `${dir}/script.ts`,
      ],
      cwd: dir,
      env: { NO_COLOR: "1", GATEWAY_TEST_HOOKS: "1" },
      // Only ends a hang: the watchdog ends the process within seconds.
      signal: AbortSignal.timeout(120_000),
    }).output();
    const out = new TextDecoder().decode(stdout);
    const err = new TextDecoder().decode(stderr);
    assertEquals(code, 70, out + err);
    assert(out.includes("worker 1 blocked"), out);
    const lines = err.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l));
    const killed = lines.find((l) => String(l.msg).includes("a new one starts"));
    const exit = lines.find((l) =>
      l.msg === "terminated data-plane worker thread still runs: the process exits for its " +
          "supervisor to restart it"
    );
    assert(killed && exit, err);
    assertEquals([exit.worker, exit.thread_id, exit.exit_code], [1, killed.thread_id, 70]);
    assert(exit.lingered_ms > 1500, JSON.stringify(exit));
    // It was this watchdog that ended the process, not the main thread's, and the way a SIGTERM
    // does: drained and written (the shutdown's last line), then the status.
    assert(!err.includes("main thread unresponsive"), err);
    const stopped = lines.findIndex((l) => l.msg === "gateway stopped");
    assert(stopped > lines.indexOf(exit), err);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
