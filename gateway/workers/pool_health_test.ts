/**
 * A data-plane worker's degraded components on the main thread: each worker's reports are kept
 * under its own source (two isolates count once, one's recovery hides no other's), a worker that
 * fails or drains takes its reports with it, and the worker side forwards changes only.
 */
import { assertEquals, assertMatch } from "../../tests/assert.ts";
import { validateConfigText } from "../../shared/gateway_config/mod.ts";
import { type WorkerHandle, WorkerPool } from "./pool.ts";
import type { FromWorker, ToWorker } from "./protocol.ts";
import { RemoteHealth } from "./remote_health.ts";
import { degradedHealth } from "../../tests/support/degraded_health.ts";

Deno.test("degraded components: two isolates count once, one's recovery keeps the other's, an ended one's go", () => {
  const { lines, health, gauge } = degradedHealth();
  health.degradedIn("worker 2", "tracking", "disk full");
  health.degradedIn("worker 1", "tracking", "cannot open the store");
  health.degradedIn("worker 2", "tracking", "disk still full");
  assertEquals(gauge("tracking"), 1);
  assertEquals(health.list().map((d) => [d.component, d.reason]), [
    ["tracking", "worker 1: cannot open the store; worker 2: disk still full"],
  ]);
  health.recoveredIn("worker 1", "tracking");
  assertEquals(health.list().map((d) => d.reason), ["worker 2: disk still full"]);
  assertEquals(gauge("tracking"), 1, "worker 2 still reports it");
  // The main thread's own report is a source of its own: a worker's going leaves it.
  const owner = {};
  health.degraded("tracking", "main's store is broken", owner);
  assertEquals(health.list().map((d) => d.reason), [
    "main's store is broken; worker 2: disk still full",
  ]);
  health.forgetSource("worker 2");
  assertEquals(health.list().map((d) => d.reason), ["main's store is broken"]);
  health.recovered("tracking", owner);
  assertEquals(health.list(), []);
  assertEquals(gauge("tracking"), 0);
  assertEquals(lines.map((l) => [l.msg, l.source]), [
    ["component degraded", "worker 2"],
    ["component degraded", "worker 1"],
    ["component recovered in one isolate", "worker 1"],
    ["component degraded", undefined],
    ["component recovered in one isolate", "worker 2"],
    ["component recovered", undefined],
  ]);
});

Deno.test("degraded components: a quiet forget (shutdown) logs nothing", () => {
  const { lines, health, gauge } = degradedHealth();
  health.degradedIn("worker 1", "tracking", "disk full");
  health.forgetSource("worker 1", true);
  health.forgetSource("worker 3");
  assertEquals(health.list(), []);
  assertEquals(gauge("tracking"), 0);
  assertEquals(lines.map((l) => l.msg), ["component degraded"]);
});

/** A stand-in worker answering `prepare`/`commit`/`drain` at once; `report` sends a message. */
class FakeWorker implements WorkerHandle {
  onmessage: ((event: MessageEvent<FromWorker>) => void) | null = null;
  onerror: ((event: ErrorEvent) => void) | null = null;

  report(message: FromWorker): void {
    this.onmessage?.({ data: message } as MessageEvent<FromWorker>);
  }

  postMessage(message: ToWorker): void {
    if (message.type === "prepare") {
      const { generation, attempt } = message;
      queueMicrotask(() => this.report({ type: "prepared", generation, attempt, problems: [] }));
    } else if (message.type === "commit") {
      queueMicrotask(() => this.report({ type: "committed", generation: message.generation }));
    } else if (message.type === "drain") {
      queueMicrotask(() => this.report({ type: "drained", delta: {} }));
    }
  }

  terminate(): void {}

  fail(): void {
    this.onerror?.({ message: "boom", preventDefault() {} } as ErrorEvent);
  }
}

const { config } = validateConfigText(
  `[endpoints.e]\nservice = "http"\n[endpoints.e.options]\npath_prefix = "/e"\n` +
    `[backends.b]\nservice = "echo"\n[pipelines.p]\nendpoints = ["e"]\nbackends = ["b"]\n`,
  "gw.toml",
);

Deno.test("worker pool: each worker's health reports go to its slot's source; a failed worker's are cleared", async () => {
  const { logger, metrics, health, gauge } = degradedHealth();
  const workers: FakeWorker[] = [];
  const pool = new WorkerPool(2, {
    logger,
    metrics,
    audit: { addAll: () => undefined },
    queue: () => undefined,
    health,
    spawn: () => {
      const w = new FakeWorker();
      workers.push(w);
      return w;
    },
  });
  await pool.prepare(1, config!, "/", new Map(), null);
  await pool.commit(1);
  workers[0].report({ type: "health", component: "tracking", reason: "disk full" });
  workers[1].report({ type: "health", component: "tracking", reason: "disk full" });
  assertEquals(health.list().map((d) => d.reason), ["worker 1: disk full; worker 2: disk full"]);
  workers[1].report({ type: "health", component: "tracking" });
  assertEquals(health.list().map((d) => d.reason), ["worker 1: disk full"]);
  // Worker 1 fails: what it reported goes with it (its successor reports its own).
  workers[0].fail();
  assertEquals(health.list(), []);
  assertEquals(gauge("tracking"), 0);
  // A late message of the failed worker is not taken for its successor's.
  workers[0].report({ type: "health", component: "tracking", reason: "late" });
  assertEquals(health.list(), []);
  const successor = workers[2];
  successor.report({ type: "health", component: "tracking", reason: "still full" });
  assertMatch(health.list()[0].reason, /^worker 1: still full$/);
  await pool.drain(0);
  assertEquals(health.list(), [], "drained workers' reports go");
});

Deno.test("RemoteHealth: only changes are sent; a successor's state is not cleared by its predecessor", () => {
  const sent: FromWorker[] = [];
  const remote = new RemoteHealth((m) => sent.push(m));
  const old = {};
  const recorder = {};
  remote.degraded("tracking", "disk full", recorder);
  remote.degraded("tracking", "disk full", recorder);
  remote.degraded("tracking", "cannot write: EIO", recorder);
  remote.recovered("tracking", old, true);
  remote.recovered("tracking", recorder);
  remote.recovered("tracking", recorder);
  assertEquals(sent, [
    { type: "health", component: "tracking", reason: "disk full" },
    { type: "health", component: "tracking", reason: "cannot write: EIO" },
    { type: "health", component: "tracking" },
  ]);
});
