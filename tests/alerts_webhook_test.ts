/**
 * Alerts to a webhook, end to end through an in-process gateway whose alerts run on a
 * ManualClock: a message the upstream refuses (400) becomes a dead letter, the `dead_letters`
 * rule fires and a real HTTP receiver gets the Slack/Teams-shaped JSON with its `${VAR}` header;
 * the dead letter retried after the upstream is fixed resolves it (a resolved notice);
 * `GET /admin/alerts` shows both states; a second episode within `min_interval_minutes` is held
 * back and sent when the interval ends. A webhook that is down retries on the clock, gives up,
 * is counted in /metrics and logged without its secret URL, while the other channel and the data
 * plane carry on, and a burst past `queue_size` drops the oldest notices (counted).
 */
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { startTestGateway, startUpstream, type TestGateway } from "./harness.ts";
import { freePort, waitFor, withEnv } from "./support/mod.ts";
import { startWebhookReceiver } from "./support/webhook_receiver.ts";
import { ManualClock } from "../shared/clock.ts";

const INTERVAL_MS = 30_000;

function config(upstream: string, alerts: string): string {
  return `
[endpoints.in]
service = "http"
[endpoints.in.options]
path_prefix = "/in"
[backends.out]
service = "http"
timeout_secs = 5
retries = 0
[backends.out.options]
base_url = "${upstream}"
[backends.out.queue]
dir = "{DIR}/queue"
initial_backoff_ms = 100
[pipelines.p]
endpoints = ["in"]
backends = ["out"]

[alerts]
evaluate_interval_secs = ${INTERVAL_MS / 1000}
gateway_name = "edge-test"
${alerts}
`;
}

async function queue(gw: TestGateway): Promise<{ dead: number; depth: number }> {
  const res = await gw.mgmtFetch("/admin/queues");
  return (await res.json()).queues[0];
}

async function post(gw: TestGateway): Promise<void> {
  const res = await fetch(`${gw.url}/in/orders`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ order: 1 }),
  });
  assertEquals(res.status, 202);
  await res.body?.cancel();
}

async function alerts(gw: TestGateway) {
  const res = await gw.mgmtFetch("/admin/alerts");
  assertEquals(res.status, 200);
  return await res.json();
}

Deno.test("alerts: dead letter -> firing webhook, retried -> resolved; a second episode is held by the rate limit", async () => {
  const hook = startWebhookReceiver();
  let refuse = true;
  const upstream = startUpstream(() =>
    refuse ? new Response("bad order", { status: 400 }) : new Response("ok")
  );
  const clock = new ManualClock();
  const gw = await withEnv(
    { ALERT_HOOK_URL: hook.url, ALERT_HOOK_TOKEN: "hook-secret-token" },
    () =>
      startTestGateway(
        config(
          upstream.url,
          `
[alerts.rules.dead]
kind = "dead_letters"
severity = "critical"
channels = ["hook"]
min_interval_minutes = 10
[alerts.channels.hook]
type = "webhook"
url = "\${ALERT_HOOK_URL}"
headers = { Authorization = "Bearer \${ALERT_HOOK_TOKEN}" }
retries = 0
`,
        ),
        { clock },
      ),
  );
  try {
    assertEquals((await alerts(gw)).enabled, true);
    await post(gw);
    await waitFor(async () => (await queue(gw)).dead === 1, {
      timeoutMs: 10_000,
      description: "the refused message became a dead letter",
    });
    await clock.advance(INTERVAL_MS);
    await hook.waitForCount(1);
    const firing = hook.received[0];
    assertEquals(firing.method, "POST");
    assertEquals(firing.headers.get("authorization"), "Bearer hook-secret-token");
    assertEquals(firing.headers.get("content-type"), "application/json");
    assertEquals(
      firing.body.text,
      "[FIRING] critical · edge-test · dead: queue out holds 1 dead letter",
    );
    const attachment =
      (firing.body.attachments as { fields: { title: string; value: string }[] }[])[0];
    const field = (t: string) => attachment.fields.find((f) => f.title === t)?.value;
    assertEquals(field("Rule"), "dead");
    assertEquals(field("Kind"), "dead_letters");
    assertEquals(field("Subjects"), "queue/out");
    const alert = firing.body.alert as Record<string, unknown>;
    assertEquals(alert.status, "firing");
    assertEquals(alert.gateway, "edge-test");
    assertEquals(alert.resolved_at, null);

    let view = await alerts(gw);
    assertEquals(view.active.length, 1);
    assertEquals(view.active[0].rule, "dead");
    assertEquals(view.active[0].notified, ["hook"]);
    assertEquals(view.channels[0].name, "hook");
    await waitFor(async () => (await alerts(gw)).channels[0].sent === 1, {
      timeoutMs: 5_000,
      description: "the channel counted the notice",
    });

    // The upstream is fixed, the dead letter retried: the alert resolves.
    refuse = false;
    const retried = await gw.mgmtFetch("/admin/queues/out/retry", { method: "POST" });
    assertEquals((await retried.json()).requeued, 1);
    await waitFor(async () => {
      const q = await queue(gw);
      return q.dead === 0 && q.depth === 0;
    }, { timeoutMs: 10_000, description: "the retried message was delivered" });
    await clock.advance(INTERVAL_MS);
    await hook.waitForCount(2);
    const resolved = hook.received[1].body;
    assertMatch(String(resolved.text), /^\[RESOLVED\] critical · edge-test · dead: cleared: /);
    assertEquals((resolved.alert as Record<string, unknown>).status, "resolved");
    assert((resolved.alert as Record<string, unknown>).resolved_at !== null);
    view = await alerts(gw);
    assertEquals(view.active, []);
    assertEquals(view.recent[0].rule, "dead");
    assertEquals(view.recent[0].status, "resolved");
    assertEquals((await (await gw.mgmtFetch("/admin/alerts?state=active")).json()).recent, []);

    // A new dead letter a minute after the first notice: held back by min_interval_minutes.
    refuse = true;
    await post(gw);
    await waitFor(async () => (await queue(gw)).dead === 1, {
      timeoutMs: 10_000,
      description: "a second dead letter",
    });
    await clock.advance(INTERVAL_MS);
    await gw.gateway.evaluateAlerts();
    view = await alerts(gw);
    assertEquals(view.active[0].rule, "dead");
    assertEquals(view.active[0].notified, []);
    assertEquals(view.channels[0].queued, 0);
    assertEquals(hook.received.length, 2);
    // The interval ends while it still fires: the held notice goes out.
    await clock.advance(10 * 60_000);
    await hook.waitForCount(3);
    assertEquals((hook.received[2].body.alert as Record<string, unknown>).status, "firing");
    assertEquals((await alerts(gw)).active[0].notified, ["hook"]);
  } finally {
    await gw.stop();
    await upstream.stop();
    await hook.stop();
  }
});

Deno.test("alerts: a webhook that is down retries on the clock and gives up, counted and logged without its URL; the rest carries on", async () => {
  const hook = startWebhookReceiver();
  const downPort = freePort(); // nothing listens there
  const upstream = startUpstream(() => new Response("bad order", { status: 400 }));
  const clock = new ManualClock();
  // Three rules fire on the first dead letter, the fourth on the second one.
  const rules = ["a", "b", "c", "d"].map((n) => `
[alerts.rules.${n}]
kind = "dead_letters"
channels = ["down", "hook"]
threshold = ${n === "d" ? 2 : 1}
`).join("");
  const gw = await startTestGateway(
    config(
      upstream.url,
      `queue_size = 2
${rules}
[alerts.channels.down]
type = "webhook"
url = "http://127.0.0.1:${downPort}/services/T0/B0/SECRETPATH123"
retries = 2
[alerts.channels.hook]
type = "webhook"
url = "${hook.url}"
`,
    ),
    { clock },
  );
  try {
    await post(gw);
    await waitFor(async () => (await queue(gw)).dead === 1, {
      timeoutMs: 10_000,
      description: "a dead letter",
    });
    await clock.advance(INTERVAL_MS);
    // The live channel gets every rule's notice while the dead one is still retrying its first.
    await hook.waitForCount(3);
    const channel = async (name: string) =>
      (await alerts(gw)).channels.find((c: { name: string }) => c.name === name);
    assertEquals((await channel("down")).queued, 3);
    await post(gw);
    await waitFor(async () => (await queue(gw)).dead === 2, {
      timeoutMs: 10_000,
      description: "a second dead letter",
    });
    await clock.advance(INTERVAL_MS);
    await hook.waitForCount(4);
    // A fourth notice for a queue of two with one in flight: the oldest waiting one dropped.
    await waitFor(async () => (await channel("down")).dropped === 1, {
      timeoutMs: 5_000,
      description: "the burst past queue_size dropped a notice",
    });
    // The data plane is not held up by the channel.
    await post(gw);
    // Each failed attempt waits its back-off on the clock (1 s, then 2 s) before the next.
    for (let i = 0; i < 3 * 3; i++) {
      const down = await channel("down");
      if (down.failed === 3) break;
      await clock.waitForTimer((ms) => ms === 1_000 || ms === 2_000);
      await clock.advance(2_000);
    }
    const down = await channel("down");
    assertEquals(down.failed, 3);
    assertEquals(down.sent, 0);
    assertEquals(down.queued, 0);
    assertMatch(down.last_error, /^webhook 127\.0\.0\.1:\d+ unreachable: /);
    assert(!down.last_error.includes("SECRETPATH123"), down.last_error);
    const metrics = await (await gw.mgmtFetch("/metrics")).text();
    assertMatch(metrics, /gateway_alert_notices_total\{channel="down",outcome="failed"\} 3/);
    assertMatch(metrics, /gateway_alert_notices_total\{channel="down",outcome="dropped"\} 1/);
    assertMatch(metrics, /gateway_alert_notices_total\{channel="down",outcome="retried"\} 6/);
    assertMatch(metrics, /gateway_alert_notices_total\{channel="hook",outcome="sent"\} 4/);
    assertMatch(metrics, /gateway_alert_firing\{rule="a"\} 1/);
    const logged = gw.logs.join("\n");
    assertMatch(logged, /alert notice given up after its retries/);
    assert(!logged.includes("SECRETPATH123"), "the webhook's URL was logged");
  } finally {
    await gw.stop();
    await upstream.stop();
    await hook.stop();
  }
});
