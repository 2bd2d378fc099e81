/**
 * WorkerPool with stand-in workers: a generation switches in every worker or in none, a failed
 * worker is replaced on the committed generation, metrics, audit records and queued requests
 * reach the main thread.
 */
import { assert, assertEquals } from "../../tests/assert.ts";
import { waitFor } from "../../tests/support/mod.ts";
import { validateConfigText } from "../../shared/gateway_config/mod.ts";
import { silentLogger } from "../../shared/mod.ts";
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

  constructor(index: number) {
    this.index = index;
  }

  send(message: FromWorker): void {
    // A message event, like a real worker's: a task of its own.
    setTimeout(() => this.onmessage?.({ data: message } as MessageEvent<FromWorker>), 0);
  }

  postMessage(message: ToWorker): void {
    this.received.push(message);
    switch (message.type) {
      case "prepare":
        return this.send({
          type: "prepared",
          generation: message.generation,
          problems: this.refuse
            ? [{ file: "gw.toml", path: "network", message: "port taken" }]
            : [],
        });
      case "commit":
        return this.send({ type: "committed", generation: message.generation });
      case "collect":
        return this.send({
          type: "metrics",
          id: message.id,
          delta: {
            gateway_requests_total: [{ values: ["p", 200], data: [this.index * 10] }],
          },
        });
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
    return this.received.map((m) => m.type);
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
  } = {},
) {
  const workers: FakeWorker[] = [];
  const metrics = createMetrics();
  const p = new WorkerPool(3, {
    logger: silentLogger,
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

Deno.test("worker pool: a failed worker is replaced on the committed generation", async () => {
  const { p, workers } = pool();
  await p.prepare(1, config!, "/", new Map(), null);
  await p.commit(1);
  workers[0].fail();
  assert(workers[0].terminated);
  await new Promise((r) => setTimeout(r, 10));
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
  await new Promise((r) => setTimeout(r, 10));
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
