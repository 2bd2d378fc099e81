/**
 * WorkerPool with stand-in workers: a generation switches in every worker or in none, a failed
 * worker is replaced on the committed generation, metrics, audit records and queued requests
 * reach the main thread, the watchdog reports a frozen worker and replaces it.
 */
import { assert, assertEquals } from "../../tests/assert.ts";
import { waitFor } from "../../tests/support/mod.ts";
import { validateConfigText } from "../../shared/gateway_config/mod.ts";
import { Logger, silentLogger } from "../../shared/mod.ts";
import { type AuditEntry, auditUnavailable } from "../audit/mod.ts";
import type { DeliveryQueue } from "../delivery/mod.ts";
import type { RequestEnvelope } from "../envelope.ts";
import { createMetrics } from "../observability/mod.ts";
import type { WorkerHandle } from "./pool.ts";
import { WorkerPool } from "./pool.ts";
import type { FromWorker, ToWorker } from "./protocol.ts";

/** A stand-in worker: answers like worker_main.ts, or refuses `prepare` when told to. */
class FakeWorker implements WorkerHandle {
  readonly index: number;
  readonly received: ToWorker[] = [];
  onmessage: ((event: MessageEvent<FromWorker>) => void) | null = null;
  onerror: ((event: ErrorEvent) => void) | null = null;
  refuse = false;
  terminated = false;
  /** A frozen event loop: nothing is answered. */
  frozen = false;
  /** Answers to `prepare` kept back (a slow build), sent before the next one's. */
  hold = false;
  readonly held: FromWorker[] = [];

  constructor(index: number) {
    this.index = index;
  }

  send(message: FromWorker): void {
    // A message event, like a real worker's: a task of its own.
    setTimeout(() => this.onmessage?.({ data: message } as MessageEvent<FromWorker>), 0);
  }

  postMessage(message: ToWorker): void {
    this.received.push(message);
    if (this.frozen) return;
    switch (message.type) {
      case "prepare": {
        const answer: FromWorker = {
          type: "prepared",
          generation: message.generation,
          attempt: message.attempt,
          problems: this.refuse
            ? [{ file: "gw.toml", path: "network", message: "port taken" }]
            : [],
        };
        if (this.hold) return void this.held.push(answer);
        for (const late of this.held.splice(0)) this.send(late);
        return this.send(answer);
      }
      case "commit":
        return this.send({ type: "committed", generation: message.generation });
      case "collect":
        return this.send({
          type: "metrics",
          id: message.id,
          delta: {
            gateway_requests_total: [{ values: ["p", 200], data: [this.index * 10] }],
          },
          inFlight: this.index,
        });
      case "ping":
        return this.send({ type: "pong", seq: message.seq, sockets: [] });
      case "drain":
        return this.send({ type: "drained", delta: {} });
    }
  }

  terminate(): void {
    this.terminated = true;
  }

  fail(): void {
    this.onerror?.({ message: "boom", preventDefault() {} } as ErrorEvent);
  }

  kinds(): string[] {
    return this.received.map((m) => m.type).filter((t) => t !== "ping");
  }
}

const { config } = validateConfigText(
  `[endpoints.e]\nservice = "http"\n[endpoints.e.options]\npath_prefix = "/e"\n` +
    `[backends.b]\nservice = "echo"\n[pipelines.p]\nendpoints = ["e"]\nbackends = ["b"]\n`,
  "gw.toml",
);

function pool(
  extra: {
    audit?: AuditEntry[];
    queue?: DeliveryQueue;
    committed?: () => Promise<void> | undefined;
    logger?: Logger;
    prepareTimeoutMs?: number;
  } = {},
) {
  const workers: FakeWorker[] = [];
  const metrics = createMetrics();
  const p = new WorkerPool(3, {
    logger: extra.logger ?? silentLogger,
    prepareTimeoutMs: extra.prepareTimeoutMs,
    metrics,
    audit: {
      addAll: (entries) => {
        extra.audit?.push(...entries);
        return extra.committed?.();
      },
    },
    queue: () => extra.queue,
    spawn: (index) => {
      const w = new FakeWorker(index);
      workers.push(w);
      return w;
    },
  });
  return { p, workers, metrics };
}

Deno.test("worker pool: a generation switches in every worker or in none", async () => {
  const { p, workers } = pool();
  assertEquals(await p.prepare(1, config!, "/", new Map(), null), []);
  await p.commit(1);
  assertEquals(workers.map((w) => w.kinds()), [
    ["prepare", "commit"],
    ["prepare", "commit"],
    ["prepare", "commit"],
  ]);
  workers[1].refuse = true;
  const problems = await p.prepare(2, config!, "/", new Map(), null);
  assertEquals(problems.map((x) => x.message), ["data-plane worker 2: port taken"]);
  // Every worker drops generation 2, none is told to commit it.
  for (const w of workers) assertEquals(w.kinds().slice(2), ["prepare", "abort"]);
  assertEquals(p.info().map((w) => w.generation), [1, 1, 1]);
});

Deno.test("worker pool: a late answer to a timed-out prepare is not taken for the next one", async () => {
  const { p, workers } = pool({ prepareTimeoutMs: 100 });
  assertEquals(await p.prepare(1, config!, "/", new Map(), null), []);
  await p.commit(1);
  // A refused reload leaves the generation at 1, so the next attempt builds generation 2 again.
  workers[0].hold = true;
  const slow = await p.prepare(2, config!, "/", new Map(), null);
  assertEquals(slow.map((x) => x.message), [
    "data-plane worker 1 did not build the configuration in time",
  ]);
  // The first attempt's "built, no problems" arrives just before the second attempt's refusal.
  workers[0].hold = false;
  workers[0].refuse = true;
  const problems = await p.prepare(2, config!, "/", new Map(), null);
  assertEquals(problems.map((x) => x.message), ["data-plane worker 1: port taken"]);
  assertEquals(p.info().map((w) => w.generation), [1, 1, 1]);
});

Deno.test("worker pool: a failed worker is replaced on the committed generation", async () => {
  const { p, workers } = pool();
  await p.prepare(1, config!, "/", new Map(), null);
  await p.commit(1);
  workers[0].fail();
  assert(workers[0].terminated);
  await waitFor(() => Promise.resolve(workers.length === 4 && workers[3].kinds().length === 2), {
    timeoutMs: 5_000,
    description: "the successor prepared and committed",
  });
  assertEquals(workers.length, 4);
  assertEquals(workers[3].index, 1);
  assertEquals(workers[3].kinds(), ["prepare", "commit"]);
  assertEquals(p.info().map((w) => w.generation), [1, 1, 1]);
});

Deno.test("worker pool: metrics, audit records and queued requests reach the main thread", async () => {
  const audit: AuditEntry[] = [];
  const accepted: RequestEnvelope[] = [];
  const queue = {
    accept: (req: RequestEnvelope) => {
      accepted.push(req);
      return Promise.resolve("d-1");
    },
  } as unknown as DeliveryQueue;
  const { p, workers, metrics } = pool({ audit, queue });
  await p.prepare(1, config!, "/", new Map(), null);
  await p.commit(1);
  await p.collect();
  assertEquals(metrics.summary().pipelines.p.requests, 10 + 20 + 30);
  assertEquals(p.info().map((w) => w.requests), [10, 20, 30]);

  workers[0].send({ type: "audit", entries: [{ event: "request", time: "t" }] });
  const body = new TextEncoder().encode('{"a":1}').buffer as ArrayBuffer;
  workers[2].send({
    type: "enqueue",
    id: 7,
    request: {
      backend: "b",
      requestId: "r1",
      protocol: "http",
      method: "POST",
      path: "/x",
      query: "a=1",
      headers: [["content-type", "application/json"]],
      metadata: { tenant: "t" },
      endpoint: "e",
      pipeline: "p",
      contentType: "application/json",
      body,
    },
  });
  await waitFor(
    () =>
      Promise.resolve(
        audit.length === 1 && accepted.length === 1 &&
          workers[2].received.at(-1)?.type === "queued",
      ),
    { timeoutMs: 5_000, description: "the audit record, the queued request and its answer" },
  );
  assertEquals(audit.length, 1);
  assertEquals(accepted.length, 1);
  assertEquals(await accepted[0].body.text(), '{"a":1}');
  assertEquals([accepted[0].pipeline, accepted[0].queryString()], ["p", "?a=1"]);
  const answer = workers[2].received.at(-1);
  assertEquals(answer, { type: "queued", id: 7, deliveryId: "d-1" });

  await p.drain(100);
  assert(workers.every((w) => w.terminated));
});

Deno.test("worker pool: a worker's durable audit batch is acknowledged once committed, or refused", async () => {
  const audit: AuditEntry[] = [];
  const commits: PromiseWithResolvers<void>[] = [];
  const { p, workers } = pool({
    audit,
    committed: () => {
      const c = Promise.withResolvers<void>();
      commits.push(c);
      return c.promise;
    },
  });
  await p.prepare(1, config!, "/", new Map(), null);
  await p.commit(1);
  const acks = () => workers[0].received.filter((m) => m.type === "audit-committed");
  workers[0].send({ type: "audit", entries: [{ event: "request", time: "t1" }], ack: 1 });
  workers[0].send({ type: "audit", entries: [{ event: "request", time: "t2" }], ack: 2 });
  await waitFor(() => Promise.resolve(commits.length === 2), {
    timeoutMs: 2_000,
    description: "both batches handed to the trail",
  });
  assertEquals(audit.length, 2);
  // Not answered before the trail says the batch is on disk.
  assertEquals(acks(), []);
  commits[0].resolve();
  commits[1].reject(auditUnavailable("disk full"));
  await waitFor(() => Promise.resolve(acks().length === 2), {
    timeoutMs: 2_000,
    description: "both batches answered",
  });
  assertEquals(acks(), [
    { type: "audit-committed", ack: 1 },
    { type: "audit-committed", ack: 2, error: "disk full" },
  ]);
  await p.drain(100);
});

Deno.test("worker pool: a frozen worker is reported unresponsive, not waited for, then replaced", async () => {
  const logs: string[] = [];
  const logger = new Logger({ level: "info", format: "json", sink: (l) => logs.push(l) });
  const { p, workers, metrics } = pool({ logger });
  await p.prepare(1, config!, "/", new Map(), null);
  await p.commit(1);
  // The kill threshold is far past the miss one: the checks made while worker 2 is unresponsive
  // and not yet replaced (collect asks only the others, in flight 1 + 3) take a few event-loop
  // turns, and a busy machine must not let the replacement overtake them.
  p.watch({ missMs: 150, killMs: 2_000 });
  await waitFor(() => Promise.resolve(p.info().every((w) => w.heartbeat_age_ms !== null)), {
    timeoutMs: 5_000,
    description: "every worker answered a heartbeat",
  });
  workers[1].frozen = true;
  await waitFor(() => Promise.resolve(p.info()[1].state === "unresponsive"), {
    timeoutMs: 5_000,
    description: "worker 2 unresponsive",
  });
  assertEquals(p.info().map((w) => w.healthy), [true, false, true]);
  assertEquals(p.unresponsive().map((w) => w.index), [2]);
  assert(
    logs.some((l) => l.includes("data-plane worker unresponsive") && l.includes('"worker":2')),
  );
  // The frozen worker is not waited for: it is not even asked (asked, it would never answer and
  // collect would wait out its timeout); the others' figures come in.
  const asked = () => workers[1].received.filter((m) => m.type === "collect").length;
  const askedBefore = asked();
  await p.collect();
  assertEquals(asked(), askedBefore);
  assertEquals(p.inFlight(), 1 + 3);
  const text = metrics.render();
  assert(text.includes('gateway_worker_unresponsive{worker="2"} 1'), text);
  assert(text.includes('gateway_watchdog_misses_total{worker="2"} 1'), text);

  // Replaced: the successor is started, then prepared, then told to commit (each a message).
  await waitFor(() => Promise.resolve(workers.length === 4 && workers[3].kinds().length === 2), {
    timeoutMs: 15_000,
    description: "worker 2 replaced, its successor prepared and committed",
  });
  assert(workers[1].terminated);
  assertEquals([workers[3].index, workers[3].kinds()], [2, ["prepare", "commit"]]);
  await waitFor(() => Promise.resolve(p.info()[1].state === "serving"), {
    timeoutMs: 5_000,
    description: "the replacement serves",
  });
  assertEquals(p.info()[1].replacements, 1);
  assert(metrics.render().includes('gateway_worker_replacements_total{reason="unresponsive"} 1'));
  // A stand-in has no sockets to shut down: the gateway stays unready rather than blackhole.
  const left = p.unresponsive();
  assertEquals(left.map((w) => w.index), [2]);
  assert(left[0].reason.includes("could not be shut down"), left[0].reason);
  await p.drain(100);
});

Deno.test("worker pool: a worker that answers again is healthy again; kill 0 never replaces", async () => {
  const logs: string[] = [];
  const logger = new Logger({ level: "info", format: "json", sink: (l) => logs.push(l) });
  const { p, workers, metrics } = pool({ logger });
  await p.prepare(1, config!, "/", new Map(), null);
  await p.commit(1);
  p.watch({ missMs: 100, killMs: 0 });
  await waitFor(() => Promise.resolve(p.info().every((w) => w.heartbeat_age_ms !== null)), {
    timeoutMs: 5_000,
    description: "every worker answered a heartbeat",
  });
  workers[0].frozen = true;
  await waitFor(() => Promise.resolve(!p.info()[0].healthy), {
    timeoutMs: 5_000,
    description: "worker 1 unresponsive",
  });
  // Well past what a kill threshold would be: still the same worker.
  await waitFor(() => Promise.resolve((p.info()[0].heartbeat_age_ms ?? 0) > 600), {
    timeoutMs: 5_000,
    description: "600 ms of silence",
  });
  assertEquals(workers.length, 3);
  workers[0].frozen = false;
  await waitFor(() => Promise.resolve(p.info()[0].healthy), {
    timeoutMs: 5_000,
    description: "worker 1 answers again",
  });
  assertEquals(p.unresponsive(), []);
  assert(metrics.render().includes('gateway_worker_unresponsive{worker="1"} 0'));
  assert(logs.some((l) => l.includes("data-plane worker responsive again")));
  await p.drain(100);
});
