/**
 * The live tail across isolates (gateway/pipeline/request_feed.ts): the pool tells its workers
 * when someone watches the main thread's feed (and a replacement worker at once), republishes the
 * events they forward, and merges their pipelines' last errors from their metrics.
 */
import { assertEquals } from "../../tests/assert.ts";
import { validateConfigText } from "../../shared/gateway_config/mod.ts";
import { silentLogger } from "../../shared/mod.ts";
import { createMetrics } from "../observability/mod.ts";
import { type RequestEvent, RequestFeed } from "../pipeline/mod.ts";
import { type WorkerHandle, WorkerPool } from "./pool.ts";
import type { FromWorker, ToWorker } from "./protocol.ts";
import { waitFor } from "../../tests/support/wait.ts";

class Stub implements WorkerHandle {
  readonly received: ToWorker[] = [];
  onmessage: ((event: MessageEvent<FromWorker>) => void) | null = null;
  onerror: ((event: ErrorEvent) => void) | null = null;
  send(message: FromWorker): void {
    setTimeout(() => this.onmessage?.({ data: message } as MessageEvent<FromWorker>), 0);
  }
  postMessage(message: ToWorker): void {
    this.received.push(message);
    if (message.type === "prepare") {
      this.send({
        type: "prepared",
        generation: message.generation,
        attempt: message.attempt,
        problems: [],
      });
    } else if (message.type === "drain") {
      this.send({ type: "drained", delta: {} });
    } else if (message.type === "commit") {
      this.send({ type: "committed", generation: message.generation });
    } else if (message.type === "collect") {
      this.send({
        type: "metrics",
        id: message.id,
        delta: {},
        inFlight: 0,
        lastErrors: [{
          pipeline: "p",
          at: "2026-01-01T00:00:09.000Z",
          status: 504,
          code: "backend_timeout",
          message: "the backend did not answer in time",
          request_id: "w1",
        }],
      });
    }
  }
  terminate(): void {}
  watches(): boolean[] {
    return this.received.flatMap((m) => m.type === "feed-watch" ? [m.on] : []);
  }
}

const { config } = validateConfigText(
  `[endpoints.e]\nservice = "http"\n[endpoints.e.options]\npath_prefix = "/e"\n` +
    `[backends.b]\nservice = "echo"\n[pipelines.p]\nendpoints = ["e"]\nbackends = ["b"]\n`,
  "gw.toml",
);

Deno.test("worker pool and the live tail: watch on and off, events and last errors come back", async () => {
  const feed = new RequestFeed();
  const workers: Stub[] = [];
  const pool = new WorkerPool(2, {
    logger: silentLogger,
    metrics: createMetrics(),
    audit: { addAll: () => undefined },
    queue: () => undefined,
    feed,
    spawn: () => {
      const w = new Stub();
      workers.push(w);
      return w;
    },
  });
  await pool.prepare(1, config!, "/", new Map(), null);
  await pool.commit(1);
  // Nobody watches: the workers are told nothing, and send nothing.
  assertEquals(workers.map((w) => w.watches()), [[], []]);

  const seen: RequestEvent[] = [];
  const stop = feed.subscribe((e) => seen.push(e));
  assertEquals(workers.map((w) => w.watches()), [[true], [true]]);
  const event: RequestEvent = {
    at: "2026-01-01T00:00:00.000Z",
    request_id: "r1",
    pipeline: "p",
    status: 200,
    duration_ms: 1,
    fields: { method: "GET" },
    worker: 2,
  };
  workers[1].send({ type: "feed", events: [event] });
  await waitFor(() => Promise.resolve(seen.length > 0), {
    timeoutMs: 5_000,
    description: "the worker's event in the feed",
  });
  assertEquals(seen, [event]);

  // A worker's pipeline errors reach the main thread's feed with its metrics.
  await pool.collect();
  assertEquals(feed.lastErrors().map((e) => e.code), ["backend_timeout"]);

  stop();
  assertEquals(workers.map((w) => w.watches()), [[true, false], [true, false]]);
  await pool.drain(1000);
});
