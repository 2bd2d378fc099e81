/**
 * A data-plane worker: its own runtime (built from the configuration the main thread sends),
 * its own HTTP listeners on the same ports as the main thread's (SO_REUSEPORT), its own metrics.
 * Nothing on the request path is shared with other threads but the rate-limit buckets (shared
 * memory); audit records and queued requests go to the main thread, which owns those files, and
 * so do its degraded components (its tracking writer's), which the main thread lists.
 *
 * Started by WorkerPool with `new Worker(..., { name: "gateway-worker-N" })`.
 */
/// <reference lib="deno.worker" />
import { TrackingRecorder } from "../tracking/mod.ts";
import { Logger } from "../../shared/mod.ts";
import { createMetrics } from "../observability/mod.ts";
import { requestFeed } from "../pipeline/mod.ts";
import { buildRuntime, DataPlane, type Runtime } from "../runtime/mod.ts";
import type { FromWorker, PrepareMessage, ToWorker } from "./protocol.ts";
import { RemoteAudit, RemoteQueues } from "./remote.ts";
import { libc } from "./libc.ts";
import { RemoteHealth } from "./remote_health.ts";
import { blockEventLoop, testHooksEnabled } from "./test_hooks.ts";

const index = Number(self.name.split("-").pop()) || 0;
const post = (message: FromWorker, transfer: Transferable[] = []) =>
  self.postMessage(message, transfer);
// The main thread tracks this thread by its kernel id once it is terminated (pool.ts).
const calls = libc();
const tid = typeof calls === "string" ? undefined : calls.threadId();
if (tid !== undefined) post({ type: "thread", tid });
/** Lines go to stderr, or to the main thread when its logger writes to a sink of its own. */
let forwardLogs = false;
const logger = new Logger({
  level: "info",
  format: "json",
  sink: (line) => {
    if (forwardLogs) post({ type: "log", line });
    else Deno.stderr.writeSync(encoder.encode(line + "\n"));
  },
}, { worker: index });
const encoder = new TextEncoder();
const metrics = createMetrics();
const audit = new RemoteAudit(post);
const queues = new RemoteQueues(post);
/**
 * This isolate's tracking writer, kept across reloads (its queue and store connection). Its
 * failures reach the main thread's degraded components: it alone sees its store.
 */
const tracking = new TrackingRecorder({
  logger: logger.child({ component: "tracking" }),
  metrics,
  health: new RemoteHealth(post),
});
// The live tail: finished requests go to the main thread only while someone watches there.
requestFeed.forwardTo((events) => post({ type: "feed", events }));
let drainMs = 10_000;
/** The main thread's listener memory (per-address counts), as the last `prepare` carried it. */
const listenerMemory = new Map<string, SharedArrayBuffer>();
const plane = new DataPlane({
  logger,
  metrics,
  audit,
  drainMs: () => drainMs,
  http3: false,
  listenerMemory,
});
/** Read once: the test hooks are off unless this process was started with them. */
const testHooks = testHooksEnabled();
/** The generation built but not yet serving (between `prepare` and `commit`). */
let pending: { runtime: Runtime; message: PrepareMessage } | undefined;

/** Messages are handled one at a time, in order. */
let queue: Promise<void> = Promise.resolve();
self.onmessage = (event: MessageEvent<ToWorker>) => {
  const message = event.data;
  // Queue answers and metrics requests need no ordering with configuration changes.
  if (message.type === "queued" || message.type === "queue-refused") {
    queues.settle(message);
    return;
  }
  if (message.type === "audit-committed") {
    audit.settle(message.ack, message.error);
    return;
  }
  if (message.type === "collect") {
    const lastErrors = requestFeed.takeUnsentErrors();
    post({
      type: "metrics",
      id: message.id,
      delta: metrics.takeDataPlaneDelta(),
      inFlight: plane.current?.inFlight ?? 0,
      ...(lastErrors.length ? { lastErrors } : {}),
    });
    return;
  }
  if (message.type === "feed-watch") {
    requestFeed.remoteWatched = message.on;
    return;
  }
  // The watchdog's heartbeat: answered by the event loop itself, whatever it is busy with.
  if (message.type === "ping") {
    post({ type: "pong", seq: message.seq, sockets: plane.listeners.sockets() });
    return;
  }
  if (message.type === "test-block") {
    if (testHooks) blockEventLoop(message.ms, message.release);
    else logger.warn("data-plane worker: test hook refused (GATEWAY_TEST_HOOKS is not 1)");
    return;
  }
  queue = queue.then(() => handle(message)).catch((err) => {
    logger.error("data-plane worker: message failed", { type: message.type, error: err as Error });
    // The main thread waits for an answer: a failure is one, not a silence until its timeout.
    if (message.type === "prepare") {
      post({
        type: "prepared",
        generation: message.generation,
        attempt: message.attempt,
        problems: [{
          file: message.config.source_files[0] ?? "<embedded>",
          path: "runtime.workers",
          message: (err as Error).message,
        }],
      });
    } else if (message.type === "drain") {
      post({ type: "drained", delta: metrics.takeDataPlaneDelta() });
    }
  });
};

async function handle(message: ToWorker): Promise<void> {
  switch (message.type) {
    case "prepare":
      return await prepare(message);
    case "commit":
      return await commit(message.generation);
    case "abort":
      return await abort(message.generation);
    case "drain":
      return await drain(message.graceMs);
  }
}

async function prepare(message: PrepareMessage): Promise<void> {
  forwardLogs = message.forwardLogs;
  for (const [name, buffer] of message.memory) {
    if (name.startsWith("network.")) listenerMemory.set(name, buffer);
  }
  if (pending) {
    await pending.runtime.close();
    pending = undefined;
  }
  const file = message.config.source_files[0] ?? "<embedded>";
  const built = await buildRuntime(message.config, message.generation, {
    logger,
    metrics,
    baseDir: message.baseDir,
    audit,
    queues,
    tracking,
    sharedMemory: message.memory,
    sharedMemoryFixed: true,
  });
  if (!built.runtime) {
    post({
      type: "prepared",
      generation: message.generation,
      attempt: message.attempt,
      problems: built.problems,
    });
    return;
  }
  // The first generation serves as soon as its listeners accept: there is nothing before it.
  const first = plane.current === undefined;
  if (first) activate(built.runtime, message);
  try {
    await plane.listeners.sync(message.config, false);
  } catch (err) {
    if (!first) await built.runtime.close();
    post({
      type: "prepared",
      generation: message.generation,
      attempt: message.attempt,
      problems: [{ file, path: "network", message: (err as Error).message }],
    });
    return;
  }
  if (!first) pending = { runtime: built.runtime, message };
  post({
    type: "prepared",
    generation: message.generation,
    attempt: message.attempt,
    problems: [],
  });
}

function activate(runtime: Runtime, message: PrepareMessage): void {
  plane.current = runtime;
  // The main thread's trail is durable (sync) when it has a file and is not `batched`.
  const trail = runtime.config.audit;
  audit.configure(
    message.auditRedacted,
    trail?.file !== undefined && trail.durability !== "batched",
  );
  logger.configure(runtime.config.logging.level, runtime.config.logging.format);
  drainMs = (runtime.config.runtime?.shutdown_grace_secs ?? 10) * 1000;
}

async function commit(generation: number): Promise<void> {
  if (pending && pending.runtime.generation === generation) {
    const old = plane.current;
    activate(pending.runtime, pending.message);
    pending = undefined;
    old.retire();
    await plane.listeners.closeStale(plane.current.config);
  }
  post({ type: "committed", generation });
}

async function abort(generation: number): Promise<void> {
  if (pending && pending.runtime.generation === generation) {
    await pending.runtime.close();
    pending = undefined;
  }
  // Listeners started for the dropped generation close; those of the serving one stay.
  if (plane.current?.generation === generation) {
    // The first generation itself was refused (another worker failed): stop serving it.
    await plane.listeners.shutdown();
  } else if (plane.current) {
    await plane.listeners.closeStale(plane.current.config);
  }
}

async function drain(graceMs: number): Promise<void> {
  drainMs = graceMs;
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([
    plane.listeners.shutdown(),
    new Promise((resolve) => timer = setTimeout(resolve, graceMs)),
  ]);
  clearTimeout(timer);
  queues.failAll();
  await plane.current?.close();
  // The tracked records still queued in this isolate are written before it goes.
  await tracking.close();
  audit.flush();
  post({ type: "drained", delta: metrics.takeDataPlaneDelta() });
}
