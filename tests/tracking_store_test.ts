/**
 * The tracking store under stress and failure:
 *
 * - a bounded queue: past `queue_size` records are dropped and counted, the component degraded;
 * - a store that cannot be opened: every request still answers, the records are dropped
 *   (`gateway_errors_total{code="tracking_dropped"}`, `tracking` degraded in `/readyz`);
 * - retention by age and by size on the Clock;
 * - kill -9 of a gateway process while it writes under traffic: the store opens again, passes
 *   SQLite's integrity check and answers searches.
 */
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { ECHO_PIPELINE, startTestGateway } from "./harness.ts";
import { freePort, startGateway, waitFor } from "./support/mod.ts";
import { trackingTable, writeTrackingIdentity } from "./support/tracking.ts";
import { ManualClock } from "../shared/clock.ts";
import { Logger } from "../shared/log.ts";
import { validateConfigText } from "../shared/gateway_config/mod.ts";
import {
  recordId,
  TrackingRecorder,
  TrackingService,
  TrackingStore,
} from "../gateway/tracking/mod.ts";
import { RequestEnvelope } from "../gateway/envelope.ts";

function quietLogger(lines: string[] = []): Logger {
  return new Logger({ level: "debug", format: "json", sink: (l: string) => lines.push(l) });
}

async function configWith(dir: string, extra: string) {
  const identity = await writeTrackingIdentity(dir);
  const r = validateConfigText(
    `${ECHO_PIPELINE}\n[pipelines.echo.tracking]\ncontent = ["received"]\n${
      trackingTable(dir, identity, extra)
    }`,
    "t.toml",
  );
  assertEquals(r.problems, []);
  return r.config!;
}

function envelope(i: number): RequestEnvelope {
  return new RequestEnvelope({
    id: `req-${i}`,
    protocol: "http",
    method: "POST",
    path: `/x/${i}`,
    endpoint: "echo",
    metadata: { service: "http", patient_id: `P${i}` },
  });
}

Deno.test("recorder: a full queue drops and counts, the store takes the rest in one batch", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tracking-queue-" });
  const clock = new ManualClock();
  const degraded: string[] = [];
  const recorder = new TrackingRecorder({
    logger: quietLogger(),
    clock,
    health: {
      degraded: (c, reason) => degraded.push(`${c}: ${reason}`),
      recovered: () => {},
    },
  });
  try {
    const config = await configWith(dir, "queue_size = 3");
    await recorder.configure(config);
    const tracking = config.pipelines.echo.tracking!;
    for (let i = 0; i < 5; i++) {
      const capture = recorder.begin("echo", tracking);
      await capture.received(envelope(i));
      capture.finish(envelope(i), 200);
    }
    assertEquals(recorder.counts.dropped, 2);
    assertEquals(recorder.counts.queued, 3);
    assertMatch(degraded[0], /^tracking: the tracking queue is full/);
    await clock.advance(20);
    await recorder.flush();
    assertEquals(recorder.counts.written, 3);
    const page = recorder.store()!.search({ fields: { patient_id: "P1" } });
    assertEquals(page.messages.map((m) => m.request_id), ["req-1"]);
  } finally {
    await recorder.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("retention: by age, then by size, on the Clock", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tracking-retention-" });
  const clock = new ManualClock();
  const recorder = new TrackingRecorder({ logger: quietLogger(), clock });
  const service = new TrackingService({
    recorder,
    runtime: () => undefined,
    logger: quietLogger(),
    clock,
  });
  try {
    const config = await configWith(
      dir,
      "max_age_hours = 24\nmax_bytes = 1048576\nretention_interval_secs = 60",
    );
    await recorder.configure(config);
    service.configure(config);
    const store = recorder.store()!;
    const row = (time: number, i: number, bytes = 0) => ({
      id: recordId(time) + i,
      time,
      request_id: `r${i}`,
      pipeline: "echo",
      endpoint: "echo",
      protocol: "http",
      method: "GET",
      path: "/",
      status: 200,
      duration_ms: 1,
      backends: [],
      metadata: { n: String(i) },
      stages: [],
      ...(bytes ? { content: new Uint8Array(bytes) } : {}),
    });
    const now = clock.now();
    store.insert([row(now - 48 * 3_600_000, 1), row(now - 47 * 3_600_000, 2), row(now, 3)]);
    // One retention pass on the clock: the two older than 24 h go.
    await clock.advance(60_000);
    assertEquals(store.search({}).messages.map((m) => m.request_id), ["r3"]);
    // Past max_bytes, the oldest go first until 90% of it is left.
    const t = clock.now();
    store.insert([0, 1, 2, 3].map((i) => row(t + i, 10 + i, 400_000)));
    assertEquals(service.prune() > 0, true);
    const left = store.counts();
    assert(left.bytes <= 1048576 * 0.9, `${left.bytes} bytes left`);
    assertEquals(store.search({ limit: 1 }).messages[0].request_id, "r13");
  } finally {
    service.close();
    await recorder.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a store that cannot be opened: requests answer, records are dropped, counted, degraded", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tracking-broken-" });
  const identity = await writeTrackingIdentity(dir);
  // The store's directory is a file: it cannot be made.
  await Deno.writeTextFile(`${dir}/not-a-dir`, "x");
  const gw = await startTestGateway(
    `${ECHO_PIPELINE}
[pipelines.echo.tracking]
[tracking]
path = "${dir}/not-a-dir"
identity_file = "${identity}"
flush_interval_ms = 10
`,
    { workers: 1 },
  );
  try {
    for (let i = 0; i < 5; i++) {
      const res = await fetch(`${gw.url}/echo/x`, { method: "POST", body: "hello" });
      assertEquals(res.status, 200);
      await res.body?.cancel();
    }
    await waitFor(async () => {
      const metrics = await (await gw.mgmtFetch("/metrics")).text();
      return /gateway_errors_total\{code="tracking_dropped"\} 5\n/.test(metrics);
    }, { timeoutMs: 5000, description: "5 dropped records counted" });
    const ready = await (await gw.mgmtFetch("/readyz")).json();
    assertEquals(ready.status, "ready");
    assertEquals(ready.degraded.map((d: { component: string }) => d.component), ["tracking"]);
    const status = await (await gw.mgmtFetch("/admin/tracking")).json();
    assert(status.dropped >= 1, JSON.stringify(status));
    assertMatch(status.degraded, /cannot open the tracking store/);
  } finally {
    await gw.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test({
  name: "kill -9 while the store is written under traffic: it opens again, whole and searchable",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "tracking-kill-" });
    const identity = await writeTrackingIdentity(dir);
    const dataPort = freePort();
    const mgmtPort = freePort();
    const gw = await startGateway({
      configText: `
[network.main]
bind = "127.0.0.1"
port = ${dataPort}
[management]
bind = "127.0.0.1"
port = ${mgmtPort}
[runtime]
workers = 2
${ECHO_PIPELINE}
[pipelines.echo.tracking]
content = ["received", "backend_response"]
${trackingTable(dir, identity, "batch_size = 50")}
`,
    });
    let stop = false;
    let sent = 0;
    const client = async () => {
      while (!stop) {
        try {
          const res = await fetch(`http://127.0.0.1:${dataPort}/echo/x`, {
            method: "POST",
            body: "x".repeat(2000),
          });
          await res.body?.cancel();
          sent++;
        } catch {
          return; // the gateway is gone
        }
      }
    };
    const clients = [client(), client(), client(), client()];
    try {
      await waitFor(async () => {
        const r = await gw.mgmtFetch("/admin/tracking");
        return (await r.json()).records >= 300;
      }, { timeoutMs: 60_000, description: "300 tracked records under traffic" });
      // Killed mid-traffic: batches are being written by both isolates.
      gw.process.kill("SIGKILL");
      await gw.process.status;
      stop = true;
      await Promise.all(clients);
      assert(sent >= 300, `${sent} requests sent`);
      const store = new TrackingStore(`${dir}/tracking-store`);
      try {
        assertEquals(store.integrity(), "ok");
        const counts = store.counts();
        assert(counts.records >= 300, `${counts.records} records after the kill`);
        const page = store.search({ pipeline: "echo", limit: 10 });
        assertEquals(page.messages.length, 10);
        assertEquals(page.messages[0].stages, ["received", "backend_response:echo"]);
        // A writer again: the next batch goes in after what survived.
        store.insert([{ ...page.messages[0], id: recordId(Date.now()), time: Date.now() }]);
        assertEquals(store.counts().records, counts.records + 1);
      } finally {
        store.close();
      }
    } finally {
      stop = true;
      await gw.stop().catch(() => {});
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  },
});

Deno.test({
  name: "a graceful stop writes what every isolate still holds",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "tracking-stop-" });
    const identity = await writeTrackingIdentity(dir);
    const dataPort = freePort();
    const gw = await startGateway({
      configText: `
[network.main]
bind = "127.0.0.1"
port = ${dataPort}
[management]
bind = "127.0.0.1"
port = ${freePort()}
[runtime]
workers = 2
${ECHO_PIPELINE}
[pipelines.echo.tracking]
${trackingTable(dir, identity)}
`.replace("flush_interval_ms = 20", "flush_interval_ms = 60000"),
    });
    try {
      // Fresh connections, so the kernel spreads them over both isolates' sockets.
      for (let i = 0; i < 40; i++) {
        const res = await fetch(`http://127.0.0.1:${dataPort}/echo/x`, {
          method: "POST",
          body: "x",
          headers: { connection: "close" },
        });
        assertEquals(res.status, 200);
        await res.body?.cancel();
      }
      // Nothing is written yet: the records wait for a flush a minute away.
      const before = new TrackingStore(`${dir}/tracking-store`);
      assertEquals(before.counts().records, 0);
      before.close();
      await gw.stop();
      const store = new TrackingStore(`${dir}/tracking-store`);
      try {
        assertEquals(store.counts().records, 40);
      } finally {
        store.close();
      }
    } finally {
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  },
});
