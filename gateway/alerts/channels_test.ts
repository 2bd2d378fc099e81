/**
 * The webhook sender against a real HTTP server (a redirect is not followed, a refusal names no
 * secret), and certificate files (a bundle by its earliest expiry, missing and malformed files).
 */
import { assertEquals, assertMatch, assertRejects } from "../../tests/assert.ts";
import { freePort, runCommand } from "../../tests/support/mod.ts";
import type { AlertChannelConfig } from "../../shared/gateway_config/mod.ts";
import { readExpiry } from "./certificates.ts";
import type { Notice } from "./types.ts";
import { webhookBody, webhookSender } from "./webhook.ts";

const NOTICE: Notice = {
  status: "firing",
  reminder: false,
  gateway: "edge",
  at: "2026-11-27T07:00:00.000Z",
  alert: {
    id: "a1",
    rule: "r",
    kind: "dead_letters",
    severity: "warning",
    status: "firing",
    since: "2026-11-27T07:00:00.000Z",
    resolved_at: null,
    summary: "queue out holds 1 dead letter",
    subjects: ["queue/out"],
    notified: [],
  },
};

function channel(url: string): AlertChannelConfig {
  return {
    name: "hook",
    type: "webhook",
    timeout_secs: 5,
    retries: 0,
    url,
    headers: { "X-Token": "header-secret-value" },
  };
}

Deno.test("webhook: a redirect is a failure, not followed; a refused connection names no secret", async () => {
  let followed = false;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
    if (new URL(req.url).pathname === "/elsewhere") followed = true;
    return new Response(null, { status: 302, headers: { location: "/elsewhere" } });
  });
  try {
    const sender = webhookSender(channel(`http://127.0.0.1:${server.addr.port}/hook/SECRET1`));
    const err = await assertRejects(() => sender.send(NOTICE, AbortSignal.timeout(5_000)));
    assertMatch(err.message, /^webhook 127\.0\.0\.1:\d+ answered 302$/);
    assertEquals(followed, false);
  } finally {
    await server.shutdown();
  }
  const down = webhookSender(
    channel(`http://127.0.0.1:${freePort()}/services/SECRET2?token=SECRET3`),
  );
  const err = await assertRejects(() => down.send(NOTICE, AbortSignal.timeout(5_000)));
  assertMatch(err.message, /unreachable/);
  for (const secret of ["SECRET2", "SECRET3", "header-secret-value"]) {
    assertEquals(err.message.includes(secret), false, err.message);
  }
});

async function cert(dir: string, name: string, days: number): Promise<string> {
  const r = await runCommand("openssl", [
    "req",
    "-x509",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:prime256v1",
    "-nodes",
    "-keyout",
    `${dir}/${name}-key.pem`,
    "-out",
    `${dir}/${name}.pem`,
    "-days",
    String(days),
    "-subj",
    `/CN=${name}`,
  ], { timeoutMs: 30_000 });
  if (r.code !== 0) throw new Error(r.stderr);
  return await Deno.readTextFile(`${dir}/${name}.pem`);
}

Deno.test("certificates: a bundle counts by its earliest expiry; missing and malformed files say why", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gw-alerts-certs-" });
  try {
    const later = await cert(dir, "later", 90);
    const sooner = await cert(dir, "sooner", 10);
    await Deno.writeTextFile(`${dir}/bundle.pem`, later + sooner);
    const e = await readExpiry(`${dir}/bundle.pem`);
    assertEquals(e.subject, "sooner");
    const days = (e.notAfter! - Date.now()) / 86_400_000;
    assertEquals(days > 9 && days <= 10, true, String(days));
    assertEquals((await readExpiry(`${dir}/nope.pem`)).error, "not found");
    await Deno.writeTextFile(`${dir}/junk.pem`, "not a certificate");
    assertEquals((await readExpiry(`${dir}/junk.pem`)).error, "holds no PEM certificate");
    await Deno.writeTextFile(
      `${dir}/broken.pem`,
      "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
    );
    assertEquals((await readExpiry(`${dir}/broken.pem`)).error, "holds no readable certificate");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("webhook body: Slack fields by default, a Teams Adaptive Card with format = teams", () => {
  const slack = webhookBody(NOTICE);
  assertEquals(slack.text, "[FIRING] warning · edge · r: queue out holds 1 dead letter");
  const fields = (slack.attachments as { fields: { title: string }[] }[])[0].fields;
  assertEquals(fields.map((f) => f.title), [
    "Gateway",
    "Rule",
    "Kind",
    "Severity",
    "Status",
    "Since",
    "Subjects",
  ]);
  const teams = webhookBody(NOTICE, "teams");
  assertEquals([teams.type, teams.text], ["message", slack.text]);
  const card =
    (teams.attachments as { contentType: string; content: Record<string, unknown> }[])[0];
  assertEquals(card.contentType, "application/vnd.microsoft.card.adaptive");
  assertEquals(card.content.type, "AdaptiveCard");
  const body = card.content.body as { type: string; facts?: unknown[] }[];
  assertEquals(body.map((b) => b.type), ["TextBlock", "FactSet"]);
  assertEquals(body[1].facts!.length, 7);
  assertEquals((teams.alert as Record<string, unknown>).rule, "r");
});
