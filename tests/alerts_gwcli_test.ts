/**
 * Alerts through a real gateway process (system clock, `evaluate_interval_secs = 1`) and gwcli:
 * a message the upstream refuses (400) becomes a dead letter and a pipeline whose upstream answers
 * 503 passes its error ratio; both rules fire, the webhook receiver gets both notices, and
 * `gwcli gateway:alerts` (and its alias `gwcli alerts --json`) lists them with the channel's
 * figures; the dead letter retried with `gwcli gateway:queue-retry` once the upstream takes it,
 * the resolved notice arrives and `gwcli gateway:alerts --all` lists the alert as resolved.
 */
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { expectExit, type GwcliHome, withGwcliHome } from "./gwcli_support.ts";
import { startUpstream } from "./harness.ts";
import { freePort, startGateway, waitFor } from "./support/mod.ts";
import { startWebhookReceiver } from "./support/webhook_receiver.ts";

async function run(home: GwcliHome, args: string[], code = 0) {
  return expectExit(await home.run(args), code, `gwcli ${args.join(" ")}`);
}

Deno.test("gwcli alerts: dead letters and an error rate fire in a gateway process; listed by gwcli", async () => {
  let refuse = true;
  const refusing = startUpstream(() =>
    refuse ? new Response("no", { status: 400 }) : new Response("ok")
  );
  const failing = startUpstream(() => new Response("down", { status: 503 }));
  const hook = startWebhookReceiver();
  const dataPort = freePort();
  const mgmtPort = freePort();
  const queueDir = await Deno.makeTempDir({ prefix: "gwcli-alerts-" });
  try {
    await withGwcliHome(async (home) => {
      await using _gateway = await startGateway({
        configText: `
[network.main]
bind = "127.0.0.1"
port = ${dataPort}
[management]
bind = "127.0.0.1"
port = ${mgmtPort}
[endpoints.in]
service = "http"
[endpoints.in.options]
path_prefix = "/in"
[endpoints.api]
service = "http"
[endpoints.api.options]
path_prefix = "/api"
[backends.lab]
service = "http"
[backends.lab.options]
base_url = "${refusing.url}"
[backends.lab.queue]
dir = "${queueDir}"
[backends.emr]
service = "http"
retries = 0
[backends.emr.options]
base_url = "${failing.url}"
[pipelines.orders]
endpoints = ["in"]
backends = ["lab"]
[pipelines.emr]
endpoints = ["api"]
backends = ["emr"]

[alerts]
evaluate_interval_secs = 1
gateway_name = "edge-cli"
[alerts.rules.lab_dead]
kind = "dead_letters"
severity = "critical"
channels = ["ops"]
[alerts.rules.emr_errors]
kind = "error_rate"
channels = ["ops"]
pipelines = ["emr"]
window_minutes = 5
max_ratio = 0.5
min_requests = 5
[alerts.channels.ops]
type = "webhook"
url = "${hook.url}"
`,
        env: { HOME: home.home, GATEWAY_MANAGEMENT_TOKEN: "" },
      });
      await run(home, ["gateway:add", "-p", String(mgmtPort), "-l", "edge"]);
      // Nothing fires yet: no alert rows, the channel has sent nothing.
      const quiet = (await run(home, ["alerts"])).stdout;
      assertMatch(quiet, /No alert is firing/);
      assertMatch(quiet, /│ ops +│ webhook +│ 0 +│ 0 +│ 0 +│ 0 +│ - +│/);
      const queued = await fetch(`http://127.0.0.1:${dataPort}/in/orders`, {
        method: "POST",
        body: "{}",
      });
      assertEquals(queued.status, 202);
      await queued.body?.cancel();
      for (let i = 0; i < 8; i++) {
        const res = await fetch(`http://127.0.0.1:${dataPort}/api/patients`);
        assertEquals(res.status, 503); // the upstream's answer, passed on
        await res.body?.cancel();
      }
      await hook.waitForCount(2, 20_000);
      const texts = hook.received.map((h) => String(h.body.text)).sort();
      assertEquals(
        texts[0],
        "[FIRING] critical · edge-cli · lab_dead: queue lab holds 1 dead letter",
      );
      assertMatch(
        texts[1],
        /^\[FIRING\] warning · edge-cli · emr_errors: pipeline emr: 8 of 8 requests failed \(100%, limit 50%\) in 5 min$/,
      );

      // The receiver has both notices; the gateway counts one sent once its answer is read,
      // a moment later: wait for the count rather than read it at once.
      let table = "";
      await waitFor(async () => {
        table = (await run(home, ["gateway:alerts"])).stdout;
        return /│ ops +│ webhook +│ 0 +│ 2 +│/.test(table);
      }, { timeoutMs: 10_000, description: "both notices counted sent by the ops channel" });
      assertMatch(table, /│ firing +│ critical +│ lab_dead +│ dead_letters +│/);
      assertMatch(table, /│ firing +│ warning +│ emr_errors +│ error_rate +│/);
      assertMatch(table, /│ ops +│ webhook +│ 0 +│ 2 +│ 0 +│ 0 +│ - +│/);
      const json = JSON.parse((await run(home, ["alerts", "--json"])).stdout);
      assertEquals(json.enabled, true);
      assertEquals(json.active.map((a: { rule: string }) => a.rule).sort(), [
        "emr_errors",
        "lab_dead",
      ]);
      assert(json.active.every((a: { status: string }) => a.status === "firing"));

      // The lab takes the order now: retried, the dead letter is delivered and its alert resolves.
      refuse = false;
      assertMatch(
        (await run(home, ["gateway:queue-retry", "lab"])).stdout,
        /Requeued 1 dead letter\(s\) of lab/,
      );
      await hook.waitForCount(3, 20_000);
      assertMatch(
        String(hook.received[2].body.text),
        /^\[RESOLVED\] critical · edge-cli · lab_dead: cleared: queue lab holds 1 dead letter$/,
      );
      const firingOnly = (await run(home, ["alerts"])).stdout;
      assert(!/│ lab_dead +│/.test(firingOnly), firingOnly);
      const all = (await run(home, ["gateway:alerts", "--all"])).stdout;
      assertMatch(all, /│ resolved +│ critical +│ lab_dead +│ dead_letters +│/);
      assertMatch(all, /│ firing +│ warning +│ emr_errors +│/);
    });
  } finally {
    await refusing.stop();
    await failing.stop();
    await hook.stop();
    await Deno.remove(queueDir, { recursive: true });
  }
});
