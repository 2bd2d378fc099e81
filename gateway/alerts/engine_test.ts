/**
 * The alert engine on a ManualClock with a state source the test sets and a recording sender:
 * reminders, a rule whose kind changes, the error-rate window, worker replacements, bounded
 * history, and the status report's bounded metadata.
 */
import { assert, assertEquals, assertMatch } from "../../tests/assert.ts";
import { ManualClock, silentLogger } from "../../shared/mod.ts";
import { type GatewayConfig, validateConfigText } from "../../shared/gateway_config/mod.ts";
import type { MetricsSummary, QueueSnapshot } from "../observability/mod.ts";
import { AlertEngine } from "./engine.ts";
import type { Notice } from "./types.ts";

function configOf(alerts: string): GatewayConfig {
  const { config, problems } = validateConfigText(
    `
[endpoints.in]
service = "http"
[endpoints.in.options]
path_prefix = "/in"
[backends.out]
service = "echo"
[pipelines.p]
endpoints = ["in"]
backends = ["out"]
[alerts.channels.hook]
type = "webhook"
url = "https://hooks.example/x"
${alerts}`,
    "gateway.toml",
  );
  assertEquals(problems, []);
  return config!;
}

function harness(alerts: string) {
  let config = configOf(alerts);
  const state = {
    queues: [] as QueueSnapshot[],
    summary: { pipelines: {}, error_counts: {} } as MetricsSummary,
    workers: [{ index: 0, state: "serving", replacements: 0 }],
    degraded: [] as { component: string; reason: string; since: string }[],
  };
  const sent: Notice[] = [];
  const clock = new ManualClock();
  const engine = new AlertEngine({
    clock,
    logger: silentLogger,
    source: {
      config: () => config,
      queueStats: () => state.queues,
      metricsSummary: () => state.summary,
      workers: () => state.workers,
      degraded: () => state.degraded,
    },
    makeSender: () =>
      Promise.resolve({
        send: (n: Notice) => {
          sent.push(n);
          return Promise.resolve();
        },
        close() {},
      }),
  });
  return {
    engine,
    state,
    sent,
    clock,
    async reconfigure(text: string) {
      config = configOf(text);
      await engine.configure(config);
    },
    /** Evaluates, then lets the channel's queue send. */
    async step(ms = 0) {
      if (ms) clock.setTimeout(() => {}, 0);
      if (ms) await clock.advance(ms);
      await engine.evaluate();
      await engine.idle();
    },
  };
}

const degraded = { component: "queue/out", reason: "disk full", since: "2026-01-01T00:00:00Z" };

Deno.test("engine: reminders every repeat_minutes while firing, none after it resolves", async () => {
  const h = harness(`
[alerts]
evaluate_interval_secs = 60
[alerts.rules.d]
kind = "component_degraded"
channels = ["hook"]
min_interval_minutes = 5
repeat_minutes = 30
`);
  await h.engine.configure(configOf(""));
  await h.reconfigure(`
[alerts]
evaluate_interval_secs = 60
[alerts.rules.d]
kind = "component_degraded"
channels = ["hook"]
min_interval_minutes = 5
repeat_minutes = 30
`);
  h.state.degraded = [degraded];
  await h.step();
  assertEquals(h.sent.map((n) => [n.status, n.reminder]), [["firing", false]]);
  await h.step(10 * 60_000);
  assertEquals(h.sent.length, 1, "no reminder before 30 minutes");
  await h.step(21 * 60_000);
  assertEquals(h.sent.map((n) => [n.status, n.reminder]), [["firing", false], ["firing", true]]);
  assertMatch(h.sent[1].alert.summary, /queue\/out degraded since .*: disk full/);
  h.state.degraded = [];
  await h.step(60_000);
  assertEquals(h.sent.at(-1)!.status, "resolved");
  await h.step(60 * 60_000);
  assertEquals(h.sent.length, 3);
  await h.engine.stop();
});

Deno.test("engine: a rule whose kind changes ends its alert without a notice; history is bounded", async () => {
  const base = `
[alerts]
history = 2
`;
  const h = harness(base + `[alerts.rules.d]\nkind = "component_degraded"\nchannels = ["hook"]\n`);
  await h.engine.configure(
    configOf(base + `[alerts.rules.d]\nkind = "component_degraded"\nchannels = ["hook"]\n`),
  );
  h.state.degraded = [degraded];
  await h.step();
  assertEquals(h.sent.length, 1);
  await h.reconfigure(base + `[alerts.rules.d]\nkind = "stuck_worker"\nchannels = ["hook"]\n`);
  const view = h.engine.view();
  assertEquals(view.active, []);
  assertMatch(view.recent[0].summary, /^ended \(the rule changed kind\)/);
  assertEquals(h.sent.length, 1, "no resolved notice for a rule that went away");
  // History keeps the last two.
  for (let i = 0; i < 3; i++) {
    await h.reconfigure(
      base +
        `[alerts.rules.d]\nkind = "component_degraded"\nchannels = ["hook"]\nmin_interval_minutes = 0\n`,
    );
    await h.step(1_000);
    h.state.degraded = [];
    await h.step(1_000);
    h.state.degraded = [degraded];
  }
  assertEquals(h.engine.view().recent.length, 2);
  await h.engine.stop();
});

Deno.test("engine: the error rate is taken over the window from sampled counters, with min_requests", async () => {
  const h = harness(`
[alerts.rules.e]
kind = "error_rate"
channels = ["hook"]
window_minutes = 5
max_ratio = 0.2
min_requests = 10
`);
  await h.engine.configure(configOf(`
[alerts.rules.e]
kind = "error_rate"
channels = ["hook"]
window_minutes = 5
max_ratio = 0.2
min_requests = 10
`));
  const counters = (requests: number, errors: number) =>
    h.state.summary = {
      pipelines: { p: { requests, errors, in_flight: 0, duration_ms_sum: 0 } },
      error_counts: {},
    };
  // 1000 requests with 500 errors happened before: the base sample hides them.
  counters(1000, 500);
  await h.step();
  counters(1005, 505); // 5 of 5 failed, below min_requests
  await h.step(60_000);
  assertEquals(h.engine.view().active, []);
  counters(1020, 508); // 8 of 20 failed: 40%
  await h.step(60_000);
  assertEquals(
    h.engine.view().active[0].summary,
    "pipeline p: 8 of 20 requests failed (40%, limit 20%) in 5 min",
  );
  // Six minutes of good traffic: the bad minute leaves the window.
  counters(1120, 508);
  await h.step(6 * 60_000);
  counters(1220, 508);
  await h.step(60_000);
  assertEquals(h.engine.view().active, []);
  assertEquals(h.sent.map((n) => n.status), ["firing", "resolved"]);
  await h.engine.stop();
});

Deno.test("engine: a replaced worker keeps stuck_worker firing for window_minutes", async () => {
  const h = harness(`
[alerts.rules.w]
kind = "stuck_worker"
channels = ["hook"]
window_minutes = 10
`);
  await h.engine.configure(configOf(`
[alerts.rules.w]
kind = "stuck_worker"
channels = ["hook"]
window_minutes = 10
`));
  h.state.workers = [{ index: 0, state: "serving", replacements: 0 }, {
    index: 1,
    state: "serving",
    replacements: 2,
  }];
  await h.step();
  assertEquals(h.engine.view().active, [], "replacements before the first look do not count");
  h.state.workers[1] = { index: 1, state: "unresponsive", replacements: 2 };
  await h.step(1_000);
  assertEquals(h.engine.view().active[0].summary, "worker 1 is unresponsive");
  h.state.workers[1] = { index: 1, state: "serving", replacements: 3 };
  await h.step(1_000);
  assertMatch(
    h.engine.view().active[0].summary,
    /^the watchdog replaced a worker 0 min ago \(3 replacements since start\)$/,
  );
  await h.step(9 * 60_000);
  assertEquals(h.engine.view().active.length, 1);
  await h.step(60_000);
  assertEquals(h.engine.view().active, []);
  assertEquals(h.sent.map((n) => n.status), ["firing", "resolved"]);
  await h.engine.stop();
});

Deno.test("engine: the status report's alerts are metadata only and bounded", async () => {
  const h = harness(`[alerts.rules.d]\nkind = "dead_letters"\nchannels = ["hook"]\n`);
  await h.engine.configure(
    configOf(`[alerts.rules.d]\nkind = "dead_letters"\nchannels = ["hook"]\n`),
  );
  h.state.queues = Array.from({ length: 40 }, (_, i) => ({
    backend: `queue_with_a_rather_long_name_${i}`,
    depth: 0,
    bytes: 0,
    in_flight: 0,
    dead: 3,
    oldest_age_secs: 0,
    delivered_total: 0,
    retried_total: 0,
    dead_lettered_total: 3,
  }));
  await h.step();
  const [summary] = h.engine.statusAlerts();
  assertEquals(Object.keys(summary).sort(), [
    "kind",
    "resolved_at",
    "rule",
    "severity",
    "since",
    "summary",
  ]);
  assert(summary.summary.length <= 300);
  assertMatch(
    summary.summary,
    /^queue queue_with_a_rather_long_name_0 holds 3 dead letters; .*; and \d+ more$/,
  );
  await h.engine.stop();
});

Deno.test("engine: notify_new tells of new dead letters while firing, within the rate limit", async () => {
  const text = `
[alerts.rules.d]
kind = "dead_letters"
channels = ["hook"]
notify_new = true
min_interval_minutes = 10
`;
  const h = harness(text);
  await h.engine.configure(configOf(text));
  const queue = (dead: number, total: number): QueueSnapshot => ({
    backend: "out",
    depth: 0,
    bytes: 0,
    in_flight: 0,
    dead,
    oldest_age_secs: 0,
    delivered_total: 0,
    retried_total: 0,
    dead_lettered_total: total,
  });
  h.state.queues = [queue(1, 1)];
  await h.step();
  assertEquals(h.sent.map((n) => [n.status, n.reminder]), [["firing", false]]);
  h.state.queues = [queue(2, 2)];
  await h.step(60_000);
  assertEquals(h.sent.length, 1, "held by min_interval_minutes");
  h.state.queues = [queue(3, 3)];
  await h.step(60_000);
  await h.step(10 * 60_000);
  assertEquals(h.sent.map((n) => [n.status, n.reminder]), [["firing", false], ["firing", true]]);
  assertEquals(h.sent[1].alert.summary, "queue out holds 3 dead letters");
  await h.step(10 * 60_000);
  assertEquals(h.sent.length, 2, "nothing new: no further notice");
  await h.engine.stop();
});
