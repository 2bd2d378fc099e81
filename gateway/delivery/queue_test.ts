/**
 * The delivery queue: its retry back-off on a manual clock; a dead letter read back and sent again
 * edited; the attempts noted before a restart counted after it.
 */
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

Deno.test("delivery queue: a dead letter's content, and its edit sent again as a new message", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gw-queue-dead-" });
  const got: { id: string; body: string; type: string | null; encoding: string | null }[] = [];
  const queue = await DeliveryQueue.open("api", dir, { ...CONFIG, initial_backoff_ms: 10 }, {
    logger: new Logger({ level: "error", format: "json", sink: () => {} }),
    attemptTimeoutMs: 30_000,
    health: { degraded: () => {}, recovered: () => {} },
    deliver: async (req) => {
      const body = new TextDecoder().decode(await req.body.bytes());
      got.push({
        id: req.metadata.delivery_id,
        body,
        type: req.headers.get("content-type"),
        encoding: req.headers.get("content-encoding"),
      });
      const status = body.includes("bad") ? 400 : 200;
      return new ResponseEnvelope(status, new Headers(), Body.empty());
    },
  });
  const dead = async (count: number) =>
    await waitFor(() => Promise.resolve(queue.stats().dead === count), {
      timeoutMs: 10_000,
      description: `${count} dead letter(s)`,
    });
  const code = async (p: Promise<unknown>) => {
    try {
      await p;
      return "resolved";
    } catch (err) {
      return `${(err as { status?: number }).status} ${(err as { code?: string }).code}`;
    }
  };
  try {
    const old = await queue.accept(
      new RequestEnvelope({
        id: "t",
        protocol: "http",
        method: "PUT",
        path: "/Patient/p1",
        rawQuery: "?x=1",
        endpoint: "api",
        headers: new Headers({ "content-type": "text/plain", "content-encoding": "identity" }),
        body: new Body(new TextEncoder().encode("a bad body"), "text/plain"),
      }),
    );
    await dead(1);
    const part = await queue.deadContent(old, 5);
    assertEquals(new TextDecoder().decode(part.body), "a bad");
    assertEquals([part.size, part.truncated], [10, true]);
    assertEquals(
      [part.header.method, part.header.path, part.header.query, part.header.content_type],
      ["PUT", "/Patient/p1", "?x=1", "text/plain"],
    );
    assertEquals((await queue.deadContent(old, 1 << 20)).truncated, false);
    assertEquals(await code(queue.deadContent("../ready/x", 10)), "400 invalid_id");
    assertEquals(
      await code(queue.deadContent("1700000000000-000001-0a0b0c0d", 10)),
      "404 not_found",
    );
    assertEquals(
      await code(queue.resendDead("1700000000000-000001-0a0b0c0d", {})),
      "404 not_found",
    );

    // Edited: a new message with the new body and type; headers of the old bytes left out.
    const fresh = await queue.resendDead(old, {
      body: new TextEncoder().encode('{"good":true}'),
      content_type: "application/json",
    });
    assertEquals(queue.stats().dead, 0);
    await waitFor(() => Promise.resolve(got.some((g) => g.id === fresh)), {
      timeoutMs: 10_000,
      description: "the edited message delivered",
    });
    assertEquals(got.at(-1), {
      id: fresh,
      body: '{"good":true}',
      type: "application/json",
      encoding: null,
    });
    assertEquals(await code(queue.deadContent(old, 10)), "404 not_found");
    assertEquals(await code(queue.resendDead(old, {})), "404 not_found");
    const names = [];
    for await (const e of Deno.readDir(`${dir}/dead`)) names.push(e.name);
    assertEquals(names, []);

    // Unedited: the same request again under a new id (refused again: a new dead letter).
    await dead(0);
    const again = await queue.accept(
      new RequestEnvelope({
        id: "u",
        protocol: "http",
        method: "POST",
        path: "/x",
        endpoint: "api",
        headers: new Headers({ "content-type": "text/plain" }),
        body: new Body(new TextEncoder().encode("still bad"), "text/plain"),
      }),
    );
    await dead(1);
    const third = await queue.resendDead(again, {});
    await waitFor(
      async () => queue.stats().dead === 1 && (await queue.list("dead"))[0]?.id === third,
      { timeoutMs: 10_000, description: "the unedited message dead again, under its new id" },
    );
    assertEquals(got.at(-1)?.body, "still bad");
    assertEquals(got.at(-1)?.type, "text/plain");
    assertEquals(queue.stats().depth, 0);
  } finally {
    await queue.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("delivery queue: attempts noted before a restart count after it (max_attempts)", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gw-queue-" });
  const config = { ...CONFIG, max_attempts: 2, initial_backoff_ms: 3_600_000 };
  const deps = {
    logger: new Logger({ level: "error", format: "json", sink: () => {} }),
    attemptTimeoutMs: 30_000,
    health: { degraded: () => {}, recovered: () => {} },
    deliver: () => Promise.resolve(ResponseEnvelope.json(503, {})),
  };
  try {
    const first = await DeliveryQueue.open("api", dir, config, deps);
    const ids: string[] = [];
    for (const n of [1, 2]) {
      ids.push(
        await first.accept(
          new RequestEnvelope({
            id: `t${n}`,
            protocol: "http",
            method: "POST",
            path: "/x",
            endpoint: "api",
            remoteAddr: "10.0.0.1",
            headers: new Headers({ "content-type": "application/json" }),
            body: Body.fromData({ n }),
          }),
        ),
      );
    }
    // fifo: the first is tried once (then waits an hour); the second waits behind it.
    await waitFor(
      () => Deno.stat(`${dir}/ready/${ids[0]}.state`).then(() => true, () => false),
      { timeoutMs: 10_000, description: "the first attempt noted" },
    );
    await first.close();
    const again = await DeliveryQueue.open("api", dir, config, deps);
    try {
      // Its second attempt is its last: it goes to the dead letters; the other one's first is not.
      await waitFor(() => Promise.resolve(again.stats().dead === 1), {
        timeoutMs: 10_000,
        description: "the first message dead after its second attempt",
      });
      assertEquals((await again.inspect(ids[0], "dead")).attempts, 2);
      assertEquals(again.stats().depth, 1);
    } finally {
      await again.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
