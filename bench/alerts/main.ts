/**
 * What an evaluation of the alert rules costs, and that a channel that hangs does not make it
 * cost more (`deno run -A bench/alerts/main.ts [--evaluations 200] [--rounds 7]`): two engines
 * with one rule of every kind over the same synthetic gateway state (50 queues, 100 pipelines,
 * 8 workers, 3 degraded components, 5 certificate files), whose conditions flip at every
 * evaluation so that each one queues six notices (firing, then resolved); one engine's webhook
 * answers at once, the other's accepts the connection and never answers. Milliseconds per
 * evaluation (medians of the rounds, which alternate so both see the same machine; a shared one:
 * compare the ratio, not the absolutes), and what the hanging channel did with the notices.
 */
import { parseArgs } from "node:util";
import { ManualClock, silentLogger } from "../../shared/mod.ts";
import { validateConfigText } from "../../shared/gateway_config/mod.ts";
import { AlertEngine } from "../../gateway/alerts/mod.ts";
import type { MetricsSummary, QueueSnapshot } from "../../gateway/observability/mod.ts";
import { runCommand } from "../../tests/support/mod.ts";
import { fixed, markdownTable } from "../http_proxy/report.ts";

const flags = parseArgs({
  options: {
    evaluations: { type: "string", default: "200" },
    rounds: { type: "string", default: "7" },
  },
}).values;
const EVALUATIONS = Number(flags.evaluations);
const ROUNDS = Number(flags.rounds);

const dir = await Deno.makeTempDir({ prefix: "gw-bench-alerts-" });
const certs: string[] = [];
for (let i = 0; i < 5; i++) {
  const path = `${dir}/cert${i}.pem`;
  const r = await runCommand("openssl", [
    "req",
    "-x509",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:prime256v1",
    "-nodes",
    "-keyout",
    `${dir}/key${i}.pem`,
    "-out",
    path,
    "-days",
    String(5 + i * 10),
    "-subj",
    `/CN=cert${i}`,
  ]);
  if (r.code !== 0) throw new Error(r.stderr);
  certs.push(path);
}

const answering = Deno.serve(
  { hostname: "127.0.0.1", port: 0, onListen: () => {} },
  () => new Response("ok"),
);
const held: ((r: Response) => void)[] = [];
const hanging = Deno.serve(
  { hostname: "127.0.0.1", port: 0, onListen: () => {} },
  () => new Promise<Response>((resolve) => held.push(resolve)),
);

function engineFor(port: number) {
  const { config, problems } = validateConfigText(
    `
[alerts]
queue_size = 100
[alerts.rules.dead]
kind = "dead_letters"
channels = ["hook"]
min_interval_minutes = 0
[alerts.rules.age]
kind = "queue_age"
max_age_minutes = 5
channels = ["hook"]
min_interval_minutes = 0
[alerts.rules.errors]
kind = "error_rate"
max_ratio = 0.1
min_requests = 10
channels = ["hook"]
min_interval_minutes = 0
[alerts.rules.certs]
kind = "certificate_expiry"
days = 1000
paths = ${JSON.stringify(certs)}
channels = ["hook"]
min_interval_minutes = 0
[alerts.rules.workers]
kind = "stuck_worker"
channels = ["hook"]
min_interval_minutes = 0
[alerts.rules.degraded]
kind = "component_degraded"
channels = ["hook"]
min_interval_minutes = 0
[alerts.channels.hook]
type = "webhook"
url = "http://127.0.0.1:${port}/hook"
timeout_secs = 300
retries = 0
`,
    "bench.toml",
  );
  if (!config) throw new Error(JSON.stringify(problems));
  let bad = false;
  let tick = 0;
  const queues = (): QueueSnapshot[] =>
    Array.from({ length: 50 }, (_, i) => ({
      backend: `q${i}`,
      depth: bad ? 3 : 0,
      bytes: 0,
      in_flight: 0,
      dead: bad && i === 7 ? 2 : 0,
      oldest_age_secs: bad ? 900 : 0,
      delivered_total: 0,
      retried_total: 0,
      dead_lettered_total: 0,
    }));
  const summary = (): MetricsSummary => {
    tick++;
    return {
      pipelines: Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`p${i}`, {
        requests: tick * 100,
        errors: bad ? tick * 50 : 0,
        in_flight: 0,
        duration_ms_sum: 0,
      }])),
      error_counts: {},
    };
  };
  const clock = new ManualClock();
  const engine = new AlertEngine({
    clock,
    logger: silentLogger,
    source: {
      config: () => config,
      queueStats: queues,
      metricsSummary: summary,
      workers: () =>
        Array.from({ length: 8 }, (_, i) => ({
          index: i,
          state: bad && i === 3 ? "unresponsive" : "serving",
          replacements: 0,
        })),
      degraded: () =>
        bad
          ? [0, 1, 2].map((i) => ({
            component: `queue/q${i}`,
            reason: "disk full",
            since: "2026-11-27T00:00:00Z",
          }))
          : [],
    },
  });
  return {
    engine,
    config,
    /** Milliseconds per evaluation (the clock's move and the sends after it not counted). */
    async run(n: number): Promise<number> {
      let total = 0;
      for (let i = 0; i < n; i++) {
        bad = !bad;
        await clock.advance(60_000);
        const start = performance.now();
        await engine.evaluate();
        total += performance.now() - start;
      }
      return total / n;
    },
  };
}

const a = engineFor(answering.addr.port);
const b = engineFor(hanging.addr.port);
await a.engine.configure(a.config);
await b.engine.configure(b.config);
await a.run(20); // warm-up
await b.run(20);
const fast: number[] = [];
const stuck: number[] = [];
for (let r = 0; r < ROUNDS; r++) {
  fast.push(await a.run(EVALUATIONS));
  // The answering channel's sends finish before the other engine's round starts.
  await a.engine.idle();
  stuck.push(await b.run(EVALUATIONS));
}
await a.engine.idle();
const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
const ma = median(fast);
const mb = median(stuck);
const channelA = a.engine.view().channels[0];
const channelB = b.engine.view().channels[0];
console.log(
  `Alert evaluation, 6 rules (every kind) over 50 queues, 100 pipelines, 8 workers, 5 ` +
    `certificates; ${EVALUATIONS} evaluations x ${ROUNDS} rounds, each queueing 6 notices ` +
    `(medians; shared machine)\n`,
);
console.log(markdownTable(
  ["webhook", "ms/evaluation", "ratio", "notices sent", "in flight + queued", "dropped"],
  [
    [
      "answers at once",
      fixed(ma, 2),
      "1.00",
      String(channelA.sent),
      String(channelA.queued),
      String(channelA.dropped),
    ],
    [
      "never answers",
      fixed(mb, 2),
      fixed(mb / ma),
      String(channelB.sent),
      String(channelB.queued),
      String(channelB.dropped),
    ],
  ],
));
await a.engine.stop();
await b.engine.stop();
for (const resolve of held) resolve(new Response("late"));
await answering.shutdown();
await hanging.shutdown();
await Deno.remove(dir, { recursive: true });
