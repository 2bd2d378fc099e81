/**
 * The cloud shows the alerts of its gateways: a gateway connected to our cloud service (in this
 * process) has a `certificate_expiry` rule that fires at start; its status report carries the
 * alert (metadata only) and the gateway's page in the cloud lists it. The cloud treats what a
 * gateway sends as untrusted: too many alerts, markup or control characters in names and
 * summaries, unknown severities and malformed times are refused with 422, and a report without
 * alerts (a gateway that predates them) is still accepted.
 */
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { call, makeUser, uiRequest, uiSession, withCloud } from "./cloud_harness.ts";
import { machineToken, startCloudGateway, waitForCloud } from "./gateway_cloud_support.ts";
import { runCommand, waitFor } from "./support/mod.ts";
import { startWebhookReceiver } from "./support/webhook_receiver.ts";

const BASE_STATUS = { health: "healthy", software_version: "0.12.0", uptime_secs: 60 };

function alert(overrides: Record<string, unknown> = {}) {
  return {
    rule: "pacs_dead",
    kind: "dead_letters",
    severity: "critical",
    since: "2026-11-27T06:41:00.000Z",
    resolved_at: null,
    summary: "queue pacs holds 3 dead letters",
    ...overrides,
  };
}

Deno.test("alerts in the cloud: a gateway's firing alert reaches its status report and its page", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gw-alerts-cloud-" });
  const certPath = `${dir}/expiring.pem`;
  const made = await runCommand("openssl", [
    "req",
    "-x509",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:prime256v1",
    "-nodes",
    "-keyout",
    `${dir}/expiring-key.pem`,
    "-out",
    certPath,
    "-days",
    "3",
    "-subj",
    "/CN=upstream-ca",
  ], { timeoutMs: 30_000 });
  assertEquals(made.code, 0, made.stderr);
  const hook = startWebhookReceiver();
  try {
    await withCloud(async (cloud) => {
      const u = await makeUser(cloud, "ada@example.com");
      const payload = await machineToken(cloud, u, "edge-alerts");
      const gw = await startCloudGateway(cloud, {
        body: `
[endpoints.local_echo]
service = "http"
[endpoints.local_echo.options]
path_prefix = "/local"
[backends.local_echo]
service = "echo"
[pipelines.local_echo]
endpoints = ["local_echo"]
backends = ["local_echo"]

[alerts]
gateway_name = "edge-alerts"
[alerts.rules.upstream_ca]
kind = "certificate_expiry"
severity = "critical"
days = 7
paths = ["${certPath}"]
channels = ["ops"]
[alerts.channels.ops]
type = "webhook"
url = "${hook.url}"
`,
      });
      try {
        assertEquals((await gw.admin("POST", "/admin/token", { body: payload })).status, 200);
        await hook.waitForCount(1);
        await waitForCloud(gw, (c) => c.sync.last_status_report_at, "a status report");
        const gwPath = `/api/gateways/${payload.gateway_id}`;
        let reported: { alerts?: Record<string, unknown>[] } = {};
        await waitFor(async () => {
          reported = (await call(cloud, "GET", gwPath, { token: u.apiToken })).json.last_status;
          return (reported?.alerts?.length ?? 0) > 0;
        }, { timeoutMs: 10_000, description: "the alert in the cloud's last status" });
        const got = reported.alerts![0];
        assertEquals(
          [got.rule, got.kind, got.severity, got.resolved_at],
          ["upstream_ca", "certificate_expiry", "critical", null],
        );
        assertMatch(
          String(got.summary),
          /^certificate .*expiring\.pem \(upstream-ca\) expires in 2 days/,
        );
        assertEquals(Object.keys(got).sort(), [
          "kind",
          "resolved_at",
          "rule",
          "severity",
          "since",
          "summary",
        ]);

        const session = await uiSession(cloud, u.user);
        const page = await uiRequest(cloud, session, `/gateways/${payload.gateway_id}`);
        assertEquals(page.status, 200);
        const section = page.text.slice(page.text.indexOf('data-testid="gateway-alerts"'));
        assertMatch(section, /1 alert firing\./);
        assertMatch(section, /<code>upstream_ca<\/code>/);
        assertMatch(section, /certificate_expiry/);
        assertMatch(section, /expires in 2 days/);
      } finally {
        await gw.stop();
      }
    });
  } finally {
    await hook.stop();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});

Deno.test("alerts in the cloud: what a gateway sends is validated and bounded", async () => {
  await withCloud(async (cloud) => {
    const u = await makeUser(cloud, "ada@example.com");
    const token = (await machineToken(cloud, u, "edge-1")).machine_token;
    const post = (alerts: unknown) =>
      call(cloud, "POST", "/api/gateway/status", { token, body: { ...BASE_STATUS, alerts } });
    const refused = async (alerts: unknown, field: RegExp) => {
      const res = await post(alerts);
      assertEquals(res.status, 422, JSON.stringify(res.json));
      const fields = res.json.error.fields.map((f: { field: string }) => f.field).join(" ");
      assertMatch(fields, field);
    };
    await refused(Array.from({ length: 51 }, () => alert()), /^alerts$/);
    await refused([alert({ rule: "<script>alert(1)</script>" })], /alerts\.0\.rule/);
    await refused([alert({ kind: "Dead Letters" })], /alerts\.0\.kind/);
    await refused([alert({ severity: "page-everyone" })], /alerts\.0\.severity/);
    await refused([alert({ since: "yesterday" })], /alerts\.0\.since/);
    await refused([alert({ summary: "line one\nline two" })], /alerts\.0\.summary/);
    await refused([alert({ summary: "x".repeat(301) })], /alerts\.0\.summary/);
    await refused([alert({ body: "patient content" })], /alerts\.0/);

    assertEquals(
      (await call(cloud, "POST", "/api/gateway/status", { token, body: BASE_STATUS })).status,
      200,
    );
    const ok = await post([
      alert(),
      alert({ rule: "old", resolved_at: "2026-11-27T07:00:00.000Z" }),
    ]);
    assertEquals(ok.status, 200);
    const gateways = (await call(cloud, "GET", "/api/gateways", { token: u.apiToken })).json;
    const id = (gateways.items ?? gateways.gateways ?? gateways)[0].id;
    const view = (await call(cloud, "GET", `/api/gateways/${id}`, { token: u.apiToken })).json;
    assertEquals(view.last_status.alerts.length, 2);
    const session = await uiSession(cloud, u.user);
    const page = await uiRequest(cloud, session, `/gateways/${id}`);
    assert(page.text.includes("1 alert firing."), "the page counts the firing alert");
    assertMatch(page.text, /<code>old<\/code>/);
  });
});
