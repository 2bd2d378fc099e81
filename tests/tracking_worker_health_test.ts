/**
 * Message tracking in a gateway of two isolates (the main thread and worker 1), each with its own
 * store connection: when the store cannot be opened, the worker's failure is shown with the main
 * thread's, named by its isolate, in `/readyz`, `gateway.degraded()`, the log and
 * `gateway_component_degraded` (counted once); once the store can be made again and each isolate
 * has written to it, `tracking` is degraded nowhere. A worker the watchdog replaces takes its
 * report with it; its successor, whose store fails too, reports its own.
 */
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { ECHO_PIPELINE, startTestGateway, type TestGateway } from "./harness.ts";
import { waitFor, withTestHooks } from "./support/mod.ts";
import { writeTrackingIdentity } from "./support/tracking.ts";

interface Degraded {
  component: string;
  reason: string;
}

/** The broken `[tracking]` of these tests: its store directory is a file. */
async function brokenTracking(dir: string): Promise<{ toml: string; storeDir: string }> {
  const identity = await writeTrackingIdentity(dir);
  const storeDir = `${dir}/store`;
  await Deno.writeTextFile(storeDir, "x");
  const toml = `${ECHO_PIPELINE}
[pipelines.echo.tracking]
[tracking]
path = "${storeDir}"
identity_file = "${identity}"
flush_interval_ms = 10
`;
  return { toml, storeDir };
}

/** `component degraded` and `component recovered...` log lines of `worker`: [msg, ...]. */
function workerLines(gw: TestGateway, worker: string): string[] {
  return gw.logs.map((l) => JSON.parse(l)).filter((l) =>
    l.source === worker && /^component /.test(l.msg)
  ).map((l) => l.msg);
}

async function readyDegraded(gw: TestGateway): Promise<Degraded[]> {
  const ready = await (await gw.mgmtFetch("/readyz")).json();
  assertEquals(ready.status, "ready", "a degraded component leaves the gateway ready");
  return ready.degraded ?? [];
}

async function gauge(gw: TestGateway): Promise<string | undefined> {
  const text = await (await gw.mgmtFetch("/metrics")).text();
  return text.match(/^gateway_component_degraded\{component="tracking"\} (\d+)$/m)?.[1];
}

Deno.test("tracking in a worker: its broken store is shown degraded on the main thread, named, and recovers", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tracking-worker-health-" });
  // No isolate can open its store.
  const { toml, storeDir } = await brokenTracking(dir);
  const gw = await startTestGateway(toml, { workers: 2 });
  // A new connection per request, so that both isolates (SO_REUSEPORT) get requests.
  const client = Deno.createHttpClient({ poolMaxIdlePerHost: 0 });
  const send = async (n: number) => {
    for (let i = 0; i < n; i++) {
      const res = await fetch(`${gw.url}/echo/x`, { method: "POST", body: "hello", client });
      assertEquals(res.status, 200);
      await res.body?.cancel();
    }
  };
  try {
    // Each isolate tries its store as the configuration is built: the worker's report arrives.
    let degraded: Degraded[] = [];
    await waitFor(async () => /worker 1: /.test((degraded = await readyDegraded(gw))[0]?.reason), {
      timeoutMs: 10_000,
      description: "worker 1's tracking failure in /readyz",
    });
    assertEquals(degraded.map((d) => d.component), ["tracking"]);
    // The main thread's own failure and worker 1's, one component.
    assertMatch(
      degraded[0].reason,
      /^cannot open the tracking store in .*; worker 1: cannot open the tracking store in /,
    );
    assertEquals(gw.gateway.degraded().map((d) => d.reason), [degraded[0].reason]);
    assertEquals(await gauge(gw), "1");
    const logged = gw.logs.map((l) => JSON.parse(l)).filter((l) => l.msg === "component degraded");
    assertEquals(logged.map((l) => [l.component, l.source]), [
      ["tracking", undefined],
      ["tracking", "worker 1"],
    ]);

    // The store can be made now: a reload has each isolate open it again at once (without one,
    // 10 s after its failure), write its records and report its recovery.
    await Deno.remove(storeDir);
    const reload = await gw.mgmtFetch("/api/reload", { method: "POST" });
    assertEquals(reload.status, 200, await reload.text());
    await waitFor(async () => {
      await send(4);
      return (await readyDegraded(gw)).length === 0;
    }, { timeoutMs: 20_000, intervalMs: 200, description: "tracking recovered in both isolates" });
    assertEquals(gw.gateway.degraded(), []);
    assertEquals(await gauge(gw), "0");
    const lines = gw.logs.map((l) => JSON.parse(l));
    assert(
      lines.some((l) => /^component recovered/.test(l.msg) && l.source === "worker 1"),
      "worker 1's recovery logged",
    );
  } finally {
    client.close();
    await gw.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("tracking in a worker: a worker the watchdog replaces takes its report along; the successor reports its own", async () => {
  await withTestHooks(async () => {
    const dir = await Deno.makeTempDir({ prefix: "tracking-worker-replaced-" });
    const { toml } = await brokenTracking(dir);
    const gw = await startTestGateway(
      `[runtime]\nwatchdog_miss_ms = 300\nwatchdog_kill_ms = 1500\n${toml}`,
      { workers: 2 },
    );
    let unblock = () => {};
    try {
      await waitFor(() => Promise.resolve(workerLines(gw, "worker 1").length === 1), {
        timeoutMs: 10_000,
        description: "worker 1's tracking failure reported",
      });
      // The watchdog watches a worker from its first answer on.
      await waitFor(async () => {
        const { workers } = await (await gw.mgmtFetch("/admin/workers")).json();
        return workers.every((w: { heartbeat_age_ms: number | null }) =>
          w.heartbeat_age_ms !== null
        );
      }, { timeoutMs: 20_000, description: "every worker answered the watchdog" });
      unblock = gw.gateway.blockWorkerForTest(1, 60_000);
      // Killed past the threshold: its report goes; the new worker 1's store fails as well.
      await waitFor(() => Promise.resolve(workerLines(gw, "worker 1").length === 3), {
        timeoutMs: 30_000,
        description: "worker 1 replaced and its successor's failure reported",
      });
      assertEquals(workerLines(gw, "worker 1"), [
        "component degraded",
        "component recovered in one isolate",
        "component degraded",
      ]);
      const [tracking] = gw.gateway.degraded();
      assertMatch(tracking.reason, /^cannot open .*; worker 1: cannot open the tracking store/);
      assertEquals(await gauge(gw), "1");
    } finally {
      unblock();
      await gw.stop();
      await Deno.remove(dir, { recursive: true });
    }
  });
});
