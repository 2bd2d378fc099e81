/** The delivery queue's retry back-off on a manual clock: advanced, never waited for. */
import { assertEquals } from "../../tests/assert.ts";
import { waitFor } from "../../tests/support/wait.ts";
import { ManualClock } from "../../shared/clock.ts";
import { Logger } from "../../shared/mod.ts";
import type { QueueConfig } from "../../shared/gateway_config/mod.ts";
import { Body, RequestEnvelope, ResponseEnvelope } from "../envelope.ts";
import { DeliveryQueue } from "./queue.ts";

const CONFIG: QueueConfig = {
  ordering: "fifo",
  concurrency: 1,
  max_messages: 100,
  max_bytes: 1 << 20,
  max_attempts: 0,
  max_age_secs: 86_400,
  initial_backoff_ms: 1_000,
  max_backoff_ms: 4_000,
  fsync: false,
  fhir_conditional_create: false,
};

Deno.test("delivery queue: a refused attempt is retried after a back-off that doubles, on the clock", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gw-queue-" });
  const clock = new ManualClock();
  const statuses = [503, 503, 503, 200];
  const attempts: number[] = [];
  const attempted = new Set<PromiseWithResolvers<void>>();
  const nextAttempt = () => {
    const w = Promise.withResolvers<void>();
    attempted.add(w);
    return w.promise;
  };
  const queue = await DeliveryQueue.open("api", dir, CONFIG, {
    logger: new Logger({ level: "error", format: "json", sink: () => {} }),
    attemptTimeoutMs: 30_000,
    health: { degraded: () => {}, recovered: () => {} },
    clock,
    deliver: () => {
      attempts.push(clock.now());
      for (const w of attempted) w.resolve();
      attempted.clear();
      return Promise.resolve(new ResponseEnvelope(statuses.shift()!, new Headers(), Body.empty()));
    },
  });
  try {
    let attempt = nextAttempt();
    await queue.accept(
      new RequestEnvelope({
        id: "t",
        protocol: "http",
        method: "POST",
        path: "/x",
        endpoint: "api",
        remoteAddr: "10.0.0.1",
        headers: new Headers({ "content-type": "application/json" }),
        body: Body.fromData({ n: 1 }),
      }),
    );
    await attempt;
    // Jittered between half and all of 1 s, 2 s, 4 s (the cap): never sooner, at the latest then.
    for (const backoff of [1_000, 2_000, 4_000]) {
      attempt = nextAttempt();
      await clock.waitForTimer((ms) => ms <= backoff); // the retry's (not the attempt timeout's)
      const before = attempts.length;
      await clock.advance(backoff / 2 - 1);
      assertEquals(attempts.length, before, `not within half of ${backoff} ms`);
      await clock.advance(backoff / 2 + 1);
      await attempt;
      assertEquals(attempts.length, before + 1);
    }
    assertEquals(attempts.length, 4);
    await waitFor(() => Promise.resolve(queue.stats().delivered_total === 1), {
      timeoutMs: 10_000,
      description: "the delivery counted",
    });
    assertEquals(queue.stats().retried_total, 3);
  } finally {
    await queue.close();
    await Deno.remove(dir, { recursive: true });
  }
});
