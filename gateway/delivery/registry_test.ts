/**
 * The queues' registry: a message waiting when a queue opens (a restart) is delivered once the
 * configuration that serves it is attached, by its first attempt, not after a failed attempt and a
 * back-off.
 */
import { assertEquals } from "../../tests/assert.ts";
import { waitFor } from "../../tests/support/wait.ts";
import { Logger } from "../../shared/mod.ts";
import type { BackendConfig } from "../../shared/gateway_config/mod.ts";
import { Body, RequestEnvelope, ResponseEnvelope } from "../envelope.ts";
import type { Backend } from "../pipeline/mod.ts";
import { DeliveryQueues } from "./registry.ts";

const CONFIG = {
  name: "api",
  service: "http",
  timeout_secs: 30,
  queue: {
    store: "file",
    ordering: "fifo",
    concurrency: 1,
    max_messages: 100,
    max_bytes: 1 << 20,
    max_attempts: 0,
    max_age_secs: 86_400,
    // An hour: a first attempt that failed for want of a configuration would wait this long.
    initial_backoff_ms: 3_600_000,
    max_backoff_ms: 3_600_000,
    fsync: false,
    fhir_conditional_create: false,
  },
} as unknown as BackendConfig;

Deno.test("delivery queues: a message accepted before the configuration is attached waits for it, then goes", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gw-queues-" });
  const queues = new DeliveryQueues(new Logger({ level: "error", format: "json", sink: () => {} }));
  const received: string[] = [];
  const backend = {
    name: "api",
    config: CONFIG,
    invoke: async (req: RequestEnvelope) => {
      received.push(await req.body.text());
      return new ResponseEnvelope(200, new Headers(), Body.empty());
    },
    close: () => {},
  } as unknown as Backend;
  try {
    const queue = await queues.open(CONFIG, dir);
    await queue.accept(
      new RequestEnvelope({
        id: "r1",
        protocol: "http",
        method: "POST",
        path: "/x",
        endpoint: "api",
        remoteAddr: "10.0.0.1",
        headers: new Headers({ "content-type": "application/json" }),
        body: Body.fromData({ waiting: true }),
      }),
    );
    // The queue has started its attempt; nothing can serve it yet.
    await waitFor(() => Promise.resolve(queue.stats().in_flight === 1), {
      timeoutMs: 10_000,
      description: "the first attempt started",
    });
    assertEquals(received, []);
    await queues.attach(
      { backend: (n) => n === "api" ? backend : undefined, acquire() {}, release() {} },
      new Set(["api"]),
    );
    await waitFor(() => Promise.resolve(queue.stats().delivered_total === 1), {
      timeoutMs: 10_000,
      description: "delivered after the attach",
    });
    assertEquals(received, [`{"waiting":true}`]);
    assertEquals(queue.stats().retried_total, 0, "no failed attempt, no back-off");
  } finally {
    await queues.close();
    await Deno.remove(dir, { recursive: true });
  }
});
