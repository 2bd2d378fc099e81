/**
 * `rate_limit` with `store = "redis"` against Debian's redis-server: one limit across three
 * gateways; Redis killed in the middle (the `on_store_error` policy answers at once, the gateway
 * is marked degraded and counts the requests), Redis back (shared limits again); TLS with a
 * client certificate and a password file. Counts over a fixed number of requests on a bucket
 * that does not refill during the test (0.001/s), so nothing depends on timing windows.
 */
import { assert, assertEquals } from "./assert.ts";
import { startTestGateway, type TestGateway } from "./harness.ts";
import { makeTestCa, removeDir, requirePeer, tempDir, waitFor } from "./support/mod.ts";
import { startRedis } from "./support/redis.ts";
import { Logger } from "../shared/mod.ts";
import { Body, RequestEnvelope } from "../gateway/envelope.ts";
import { MIDDLEWARE_FACTORIES } from "../gateway/middleware/mod.ts";
import { RedisBuckets } from "../gateway/middleware/redis_buckets.ts";
import { createMetrics } from "../gateway/observability/mod.ts";
import type { Middleware } from "../gateway/pipeline/mod.ts";
import type { GatewayConfig } from "../shared/gateway_config/mod.ts";

const HAS_REDIS = requirePeer("rate_limit redis tests", "redis-server", "redis-server");
const BURST = 30;

function limitToml(url: string, policy: string, extra = ""): string {
  return `
[endpoints.api]
service = "http"
[endpoints.api.options]
path_prefix = "/api"

[middleware.limit]
type = "rate_limit"
[middleware.limit.options]
requests_per_second = 0.001
burst = ${BURST}
key = "header:x-tenant"
store = "redis"
redis_url = "${url}"
on_store_error = "${policy}"
${extra}

[backends.echo]
service = "echo"

[pipelines.api]
endpoints = ["api"]
middleware = ["limit"]
backends = ["echo"]
`;
}

/** Sends `rounds` requests to each gateway in turn; the statuses counted. */
async function send(
  gateways: TestGateway[],
  tenant: string,
  rounds: number,
): Promise<{ counts: Record<number, number> }> {
  const counts: Record<number, number> = {};
  for (let i = 0; i < rounds; i++) {
    await Promise.all(gateways.map(async (gw) => {
      const res = await fetch(`${gw.url}/api/x`, { headers: { "x-tenant": tenant } });
      await res.body?.cancel();
      counts[res.status] = (counts[res.status] ?? 0) + 1;
    }));
  }
  return { counts };
}

/**
 * Records how every {@link RedisBuckets.take} of the gateways in this process ends (they run in
 * it: `workers: 1`) until `stop`: "ok", or the message it failed with.
 */
function recordTakes(): { outcomes: string[]; stop(): void } {
  const original = RedisBuckets.prototype.take;
  const outcomes: string[] = [];
  RedisBuckets.prototype.take = function (this: RedisBuckets, key: string) {
    return original.call(this, key).then(
      (tokens) => (outcomes.push("ok"), tokens),
      (err) => {
        outcomes.push(String((err as Error)?.message ?? err));
        throw err;
      },
    );
  };
  return { outcomes, stop: () => RedisBuckets.prototype.take = original };
}

/** Rejects after 60 s: ends a hang of `work`, and only that (no verdict rests on it). */
async function hangGuard<T>(what: string, work: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      work,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`hang guard (60 s): ${what}`)), 60_000);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

Deno.test({
  name: "rate_limit redis: one limit across three gateways; Redis killed: local buckets, " +
    "degraded and counted, never hanging; Redis back: shared again",
  ignore: !HAS_REDIS,
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    await using redis = await startRedis();
    const gateways: TestGateway[] = [];
    try {
      for (let i = 0; i < 3; i++) {
        // A generous timeout: on a loaded machine a slow answer must not count as an outage.
        gateways.push(
          await startTestGateway(limitToml(redis.url, "local", "redis_timeout_ms = 2000"), {
            workers: 1,
          }),
        );
      }
      // 3 x 40 requests for one tenant: the shared bucket lets exactly BURST through.
      let sent = await send(gateways, "ward-7", 40);
      assertEquals(sent.counts, { 200: BURST, 429: 3 * 40 - BURST });
      // Another tenant has its own bucket.
      sent = await send(gateways, "ward-8", 5);
      assertEquals(sent.counts, { 200: 15 });

      await redis.kill();
      // Each gateway now takes from its own buckets (fresh: not used while Redis answered), and
      // answers at once: the connection is known to be down. Proved by how the asks of Redis
      // ended, not by a duration: none waited out redis_timeout_ms (ioredis's "Command timed
      // out"); each failed on the closed connection, or was not made at all.
      const takes = recordTakes();
      try {
        sent = await hangGuard("requests without Redis", send(gateways, "ward-7", 40));
      } finally {
        takes.stop();
      }
      assertEquals(sent.counts, { 200: 3 * BURST, 429: 3 * (40 - BURST) });
      assertEquals(takes.outcomes.filter((o) => o === "ok"), [], "Redis is gone");
      assertEquals(
        takes.outcomes.filter((o) => /timed out|timeout/i.test(o)),
        [],
        `no ask of Redis waited for its timeout: ${JSON.stringify(takes.outcomes)}`,
      );
      for (const gw of gateways) {
        const degraded = gw.gateway.degraded();
        assertEquals(degraded.map((d) => d.component), ["rate_limit.limit"]);
        assert(degraded[0].reason.includes("on_store_error = local"), degraded[0].reason);
        const metrics = await (await gw.mgmtFetch("/metrics")).text();
        assert(
          /gateway_rate_limit_store_errors_total\{middleware="limit",policy="local"\} 40/.test(
            metrics,
          ),
          metrics.split("\n").filter((l) => l.includes("rate_limit")).join("\n"),
        );
        assert(/gateway_component_degraded\{component="rate_limit.limit"\} 1/.test(metrics));
        // Logged once, however many requests met the outage.
        const lines = gw.logs.filter((l) => l.includes('"component degraded"'));
        assertEquals(lines.length, 1, lines.join("\n"));
      }

      await redis.start(); // empty: no persistence
      await waitFor(
        () => Promise.resolve(gateways.every((gw) => gw.gateway.degraded().length === 0)),
        { timeoutMs: 20_000, description: "the gateways reconnected to Redis" },
      );
      sent = await send(gateways, "ward-7", 40);
      assertEquals(sent.counts, { 200: BURST, 429: 3 * 40 - BURST });
      for (const gw of gateways) {
        assert(gw.logs.some((l) => l.includes('"component recovered"')));
      }
    } finally {
      for (const gw of gateways) await gw.stop();
    }
  },
});

Deno.test({
  name: "rate_limit redis: N/s holds across three gateways within 10 %",
  ignore: !HAS_REDIS,
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    await using redis = await startRedis();
    const RATE = 40;
    const toml = limitToml(redis.url, "deny", "redis_timeout_ms = 2000")
      .replace("requests_per_second = 0.001", `requests_per_second = ${RATE}`)
      // A bucket of half a second: a pause of the (shared, busy) test machine shorter than that
      // loses no tokens.
      .replace(`burst = ${BURST}`, `burst = ${RATE / 2}`);
    const gateways: TestGateway[] = [];
    try {
      for (let i = 0; i < 3; i++) gateways.push(await startTestGateway(toml, { workers: 1 }));
      // Three clients, one per gateway, ask until 140 requests have passed in all: the cluster
      // lets RATE per second through, however many gateways ask. Each asks again PACE_MS after a
      // refusal (not flat out, which burns the test machine's CPU for nothing): 3 x 100/s, well
      // over RATE, and a token waits at most PACE_MS to be taken (0.3 % of the ~3 s measured).
      const WANTED = 140;
      const PACE_MS = 10;
      let passed = 0;
      let refused = 0;
      const started = performance.now();
      await Promise.all(gateways.map(async (gw) => {
        while (passed < WANTED) {
          const res = await fetch(`${gw.url}/api/x`, {
            headers: { "x-tenant": "ward-9" },
            signal: AbortSignal.timeout(10_000),
          });
          await res.body?.cancel();
          if (res.status === 200) passed++;
          else if (res.status === 429) {
            refused++;
            await new Promise((r) => setTimeout(r, PACE_MS));
          } else throw new Error(`unexpected status ${res.status}`);
        }
      }));
      const seconds = (performance.now() - started) / 1000;
      // The first RATE / 2 tokens were in the bucket; the rest came at RATE per second.
      const rate = (passed - RATE / 2) / seconds;
      assert(
        Math.abs(rate - RATE) <= RATE * 0.1,
        `${passed} passed (${refused} refused) in ${seconds.toFixed(2)} s: ${rate.toFixed(1)}/s`,
      );
      assert(refused > passed, `the clients asked faster than the limit (${refused} refused)`);
    } finally {
      for (const gw of gateways) await gw.stop();
    }
  },
});

Deno.test({
  name: "rate_limit redis: a gateway with two data-plane isolates: one bucket in Redis, " +
    "one local fallback, the outage reported once by the main thread, counted across isolates",
  ignore: !HAS_REDIS,
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    await using redis = await startRedis();
    const gw = await startTestGateway(
      limitToml(redis.url, "local", "redis_timeout_ms = 2000"),
      { workers: 2 },
    );
    try {
      // Separate connections (so the kernel spreads them over both isolates).
      const sendAll = async (tenant: string, n: number) => {
        const counts: Record<number, number> = {};
        for (let i = 0; i < n; i++) {
          const res = await fetch(`${gw.url}/api/x`, {
            headers: { "x-tenant": tenant, connection: "close" },
            signal: AbortSignal.timeout(10_000),
          });
          await res.body?.cancel();
          counts[res.status] = (counts[res.status] ?? 0) + 1;
        }
        return counts;
      };
      assertEquals(await sendAll("ward-1", 40), { 200: BURST, 429: 40 - BURST });
      await redis.kill();
      // Both isolates take from the same local buckets.
      assertEquals(await sendAll("ward-1", 40), { 200: BURST, 429: 40 - BURST });
      // A worker tells the main thread by message: the report may land just after the answers.
      await waitFor(
        () =>
          Promise.resolve(gw.gateway.degraded().some((d) => d.component === "rate_limit.limit")),
        {
          timeoutMs: 10_000,
          description: "rate_limit.limit degraded on the main thread",
        },
      );
      assertEquals(gw.gateway.degraded().map((d) => d.component), ["rate_limit.limit"]);
      await waitFor(async () => {
        const metrics = await (await gw.mgmtFetch("/metrics")).text();
        return /gateway_rate_limit_store_errors_total\{middleware="limit",policy="local"\} 40\b/
          .test(metrics);
      }, { timeoutMs: 10_000, description: "40 store errors counted over both isolates" });
      assertEquals(gw.logs.filter((l) => l.includes('"component degraded"')).length, 1);
      assertEquals(gw.logs.filter((l) => l.includes("rate limit store unreachable")).length, 0);
    } finally {
      await gw.stop();
    }
  },
});

function request(tenant: string): RequestEnvelope {
  return new RequestEnvelope({
    id: "t",
    protocol: "http",
    method: "GET",
    path: "/",
    endpoint: "api",
    remoteAddr: "10.0.0.1",
    headers: new Headers({ "x-tenant": tenant }),
    body: Body.empty(),
  });
}

/** The middleware as a gateway builds it (no workers, no health). */
async function build(options: Record<string, unknown>, baseDir: string): Promise<Middleware> {
  return await MIDDLEWARE_FACTORIES.rate_limit!(
    {
      name: "limit",
      type: "rate_limit",
      options: { key: "header:x-tenant", max_keys: 1000, ...options },
    } as unknown as GatewayConfig["middleware"][string],
    {
      config: {} as GatewayConfig,
      logger: new Logger({ level: "error", format: "json", sink: () => {} }),
      baseDir,
      metrics: createMetrics(),
    },
  );
}

/** The status a request gets from `limit`: 200 when it passes. */
async function status(limit: Middleware, tenant: string): Promise<number> {
  try {
    await limit.onRequest!(request(tenant));
    return 200;
  } catch (err) {
    return (err as { status: number }).status;
  }
}

Deno.test({
  name: "rate_limit redis: TLS with a client certificate and a password file; " +
    "on_store_error allow and deny",
  ignore: !HAS_REDIS,
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const dir = await tempDir("gw-redis-tls-");
    try {
      const ca = await makeTestCa(dir);
      const server = await ca.server("redis", ["localhost", "127.0.0.1"]);
      const client = await ca.client("gateway", "gateway");
      const password = `pw-${crypto.randomUUID()}`;
      await Deno.writeTextFile(`${dir}/redis-password`, `${password}\n`);
      await using redis = await startRedis({
        password,
        tls: { cert: server, caPath: ca.certPath, requireClientCert: true },
      });
      assert(redis.url.startsWith("rediss://"));
      const tls = {
        redis_url: redis.url,
        redis_password_file: "redis-password",
        redis_ca_path: ca.certPath,
        redis_cert_path: client.certPath,
        redis_key_path: client.keyPath,
      };
      const base = {
        requests_per_second: 0.001,
        burst: 3,
        store: "redis",
        redis_timeout_ms: 2_000,
        ...tls,
      };
      const deny = await build({ ...base, on_store_error: "deny" }, dir);
      const allow = await build({ ...base, on_store_error: "allow" }, dir);
      try {
        // Both share the bucket of "a" over TLS: 3 pass in all.
        const statuses = [];
        for (let i = 0; i < 3; i++) {
          statuses.push(await status(deny, "a"), await status(allow, "a"));
        }
        assertEquals(statuses, [200, 200, 200, 429, 429, 429]);
        await redis.kill();
        assertEquals([await status(deny, "a"), await status(deny, "b")], [503, 503]);
        assertEquals([await status(allow, "a"), await status(allow, "b")], [200, 200]);
        await redis.start();
        await waitFor(async () => await status(deny, "c") === 200, {
          timeoutMs: 20_000,
          description: "the deny limit reaches Redis again",
        });
        assertEquals([await status(allow, "c"), await status(deny, "c")], [200, 200]);
        assertEquals(await status(allow, "c"), 429);
        // A server that does not answer: the command times out, the policy decides.
        redis.pause();
        try {
          const started = performance.now();
          assertEquals(await status(deny, "d"), 503);
          const waited = performance.now() - started;
          assert(waited >= 1_500 && waited < 10_000, `answered after ${waited} ms`);
          // Known down: the next request is decided at once (one probe at a time asks Redis).
        } finally {
          redis.resume();
        }
        await waitFor(async () => await status(deny, "e") === 200, {
          timeoutMs: 20_000,
          description: "the deny limit reaches Redis again after the pause",
        });
      } finally {
        await deny.close?.();
        await allow.close?.();
      }
      // A wrong password: every request is decided by the policy, nothing hangs.
      await Deno.writeTextFile(`${dir}/redis-password`, "wrong\n");
      const wrong = await build({ ...base, on_store_error: "deny" }, dir);
      try {
        assertEquals(await status(wrong, "a"), 503);
      } finally {
        await wrong.close?.();
      }
    } finally {
      await removeDir(dir);
    }
  },
});
