/**
 * What a `rate_limit` decision costs with `store = "redis"` against `store = "memory"`
 * (`deno run -A bench/rate_limit/main.ts [--requests 20000] [--concurrency 1,32] [--rounds 5]`):
 * the middleware as a gateway builds it, Debian's redis-server on loopback, `requests` decisions
 * per round over 1,000 client keys with `concurrency` of them in flight. Microseconds per decision
 * (p50, p99) and decisions per second, medians of the rounds, which alternate the stores so both see
 * the same machine (a shared one: compare the ratio, not the absolutes). With Redis a decision is
 * one round trip; concurrent ones share a pipelined write.
 */
import { parseArgs } from "node:util";
import { Logger } from "../../shared/mod.ts";
import type { GatewayConfig } from "../../shared/gateway_config/mod.ts";
import { Body, RequestEnvelope } from "../../gateway/envelope.ts";
import { MIDDLEWARE_FACTORIES } from "../../gateway/middleware/mod.ts";
import { createMetrics } from "../../gateway/observability/mod.ts";
import type { Middleware } from "../../gateway/pipeline/mod.ts";
import { startRedis } from "../../tests/support/redis.ts";
import { fixed, markdownTable, median } from "../http_proxy/report.ts";

const flags = parseArgs({
  options: {
    requests: { type: "string", default: "20000" },
    concurrency: { type: "string", default: "1,32" },
    rounds: { type: "string", default: "5" },
  },
}).values;
const REQUESTS = Number(flags.requests);
const ROUNDS = Number(flags.rounds);
const CONCURRENCY = flags.concurrency!.split(",").map(Number);

const requests = Array.from({ length: 1000 }, (_, i) =>
  new RequestEnvelope({
    id: `r${i}`,
    protocol: "http",
    method: "GET",
    path: "/",
    endpoint: "api",
    remoteAddr: `10.0.${i >> 8}.${i & 255}`,
    headers: new Headers(),
    body: Body.empty(),
  }));

async function build(options: Record<string, unknown>): Promise<Middleware> {
  return await MIDDLEWARE_FACTORIES.rate_limit!(
    {
      name: "bench",
      type: "rate_limit",
      options: { key: "client_ip", max_keys: 10_000, requests_per_second: 1e6, ...options },
    } as unknown as GatewayConfig["middleware"][string],
    {
      config: {} as GatewayConfig,
      logger: new Logger({ level: "error", format: "json" }),
      baseDir: Deno.cwd(),
      metrics: createMetrics(),
    },
  );
}

/** One round: µs per decision (sorted) and decisions per second. */
async function round(limit: Middleware, concurrency: number) {
  const times: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < REQUESTS) {
      const req = requests[next++ % requests.length];
      const t = performance.now();
      try {
        await limit.onRequest!(req);
      } catch (err) {
        if ((err as { status?: number }).status !== 429) throw err;
      }
      times.push((performance.now() - t) * 1000);
    }
  }));
  const seconds = (performance.now() - started) / 1000;
  times.sort((a, b) => a - b);
  return {
    p50: times[Math.floor(times.length * 0.5)],
    p99: times[Math.floor(times.length * 0.99)],
    rate: REQUESTS / seconds,
  };
}

await using redis = await startRedis();
const stores = {
  memory: await build({}),
  redis: await build({ store: "redis", redis_url: redis.url, redis_timeout_ms: 1000 }),
};
const rows: string[][] = [];
try {
  for (const concurrency of CONCURRENCY) {
    const results: Record<string, { p50: number[]; p99: number[]; rate: number[] }> = {
      memory: { p50: [], p99: [], rate: [] },
      redis: { p50: [], p99: [], rate: [] },
    };
    for (let r = 0; r < ROUNDS; r++) {
      for (const [name, limit] of Object.entries(stores)) {
        const got = await round(limit, concurrency);
        results[name].p50.push(got.p50);
        results[name].p99.push(got.p99);
        results[name].rate.push(got.rate);
      }
    }
    for (const name of ["memory", "redis"]) {
      const x = results[name];
      rows.push([
        name,
        String(concurrency),
        fixed(median(x.p50), 1),
        fixed(median(x.p99), 1),
        fixed(median(x.rate), 0),
      ]);
    }
  }
} finally {
  for (const limit of Object.values(stores)) await limit.close?.();
}
console.log(
  `rate_limit decisions: ${REQUESTS} per round, ${ROUNDS} rounds (medians), redis-server on loopback`,
);
console.log(
  markdownTable(["store", "in flight", "p50 µs", "p99 µs", "decisions/s"], rows),
);
