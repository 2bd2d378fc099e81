/**
 * Alerts by e-mail, end to end: an in-process gateway serving TLS with a certificate that expires
 * in 5 days has a `certificate_expiry` rule (10 days) whose notices go by SMTP to nodemailer's
 * `smtp-server` on loopback, which offers STARTTLS with a self-signed certificate (trusted through
 * `ca_path`) and requires AUTH: the firing mail arrives over STARTTLS from the authenticated user,
 * with the subject and body of the notice; the certificate renewed, the resolved mail follows;
 * the ManualClock moved 51 days on, the renewed certificate is near its end and it fires again.
 * A server that offers no STARTTLS gets nothing (the password is never sent in clear), and the
 * failure is counted and logged without the password.
 */
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { startTestGateway, type TestGateway } from "./harness.ts";
import { runCommand, waitFor } from "./support/mod.ts";
import { startSmtpServer } from "./support/smtp_server.ts";
import { ManualClock } from "../shared/clock.ts";

const DAY_MS = 86_400_000;

/** A self-signed certificate for localhost and 127.0.0.1, valid `days` days, made by openssl. */
async function selfSigned(dir: string, name: string, days: number) {
  const certPath = `${dir}/${name}.pem`;
  const keyPath = `${dir}/${name}-key.pem`;
  const r = await runCommand("openssl", [
    "req",
    "-x509",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:prime256v1",
    "-nodes",
    "-keyout",
    keyPath,
    "-out",
    certPath,
    "-days",
    String(days),
    "-subj",
    `/CN=${name}`,
    "-addext",
    "subjectAltName=DNS:localhost,IP:127.0.0.1",
  ], { timeoutMs: 30_000 });
  if (r.code !== 0) throw new Error(`openssl failed: ${r.stderr}`);
  return {
    certPath,
    keyPath,
    cert: await Deno.readTextFile(certPath),
    key: await Deno.readTextFile(keyPath),
  };
}

function mailAlerts(port: number, caPath: string, extra = ""): string {
  return `
[endpoints.echo]
service = "http"
[endpoints.echo.options]
path_prefix = "/echo"
[backends.echo]
service = "echo"
[pipelines.echo]
endpoints = ["echo"]
backends = ["echo"]

[alerts]
evaluate_interval_secs = 60
gateway_name = "edge-mail"
[alerts.rules.certs]
kind = "certificate_expiry"
days = 10
channels = ["mail"]
[alerts.channels.mail]
type = "email"
host = "127.0.0.1"
port = ${port}
user = "alerts"
password = "smtp-pass-123456"
from = "gateway@hospital.example"
to = ["oncall@hospital.example", "integration@hospital.example"]
subject_prefix = "[edge]"
ca_path = "${caPath}"
retries = 0
${extra}
`;
}

/** The decoded subject and the body of a raw message (nodemailer folds and may encode them). */
function parts(raw: string): { subject: string; body: string; headers: string } {
  const split = raw.indexOf("\r\n\r\n");
  const headers = raw.slice(0, split);
  const unfolded = headers.replace(/\r\n[ \t]+/g, " ");
  let subject = /^Subject: (.*)$/m.exec(unfolded)?.[1] ?? "";
  // RFC 2047: adjacent encoded words join without the space between them.
  subject = subject.replace(/\?=\s+=\?utf-8\?Q\?/gi, "").replace(
    /=\?utf-8\?Q\?(.*?)\?=/gi,
    (_m, q: string) =>
      decodeURIComponent(
        q.replace(/_/g, " ").replace(/%/g, "%25").replace(/=([0-9A-F]{2})/gi, "%$1"),
      ),
  );
  let body = raw.slice(split + 4);
  if (/Content-Transfer-Encoding: quoted-printable/i.test(headers)) {
    body = decodeURIComponent(
      body.replace(/=\r\n/g, "").replace(/%/g, "%25").replace(/=([0-9A-F]{2})/gi, "%$1"),
    );
  }
  return { subject, body, headers: unfolded };
}

Deno.test("alerts by e-mail: STARTTLS and AUTH to smtp-server; firing, resolved, firing again as the clock moves on", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gw-alerts-mail-" });
  const smtpCert = await selfSigned(dir, "smtp", 30);
  const serving = await selfSigned(dir, "serving", 5);
  const smtp = await startSmtpServer({
    tls: { cert: smtpCert.cert, key: smtpCert.key },
    auth: { user: "alerts", password: "smtp-pass-123456" },
  });
  const clock = new ManualClock();
  let gw: TestGateway | undefined;
  try {
    gw = await startTestGateway(mailAlerts(smtp.port, smtpCert.certPath), {
      tls: { certPath: serving.certPath, keyPath: serving.keyPath },
      clock,
    });
    // The first evaluation runs at start.
    await smtp.waitForCount(1);
    const firing = smtp.messages[0];
    assertEquals(firing.secure, true, "the session was upgraded with STARTTLS");
    assertEquals(firing.user, "alerts");
    assertEquals(firing.from, "gateway@hospital.example");
    assertEquals(firing.to, ["oncall@hospital.example", "integration@hospital.example"]);
    const first = parts(firing.raw);
    assertMatch(
      first.subject,
      new RegExp(
        `^\\[edge\\] \\[FIRING\\] warning · edge-mail · certs: certificate ${serving.certPath} \\(serving\\) expires in 4 days`,
      ),
    );
    assertMatch(first.body, /Rule: +certs/);
    assertMatch(first.body, /Kind: +certificate_expiry/);
    assertMatch(first.body, new RegExp(`Subjects: +${serving.certPath}`));
    assertMatch(first.headers, /X-Gateway-Alert: firing; rule=certs; id=/);
    assert(!firing.raw.includes("smtp-pass-123456"));

    // Renewed for 60 days: resolved at the next evaluation.
    const renewed = await selfSigned(dir, "renewed", 60);
    await Deno.copyFile(renewed.certPath, serving.certPath);
    await clock.advance(60_000);
    await smtp.waitForCount(2);
    const resolved = parts(smtp.messages[1].raw);
    assertMatch(resolved.subject, /^\[edge\] \[RESOLVED\] warning · edge-mail · certs: cleared: /);
    assertMatch(resolved.body, /Resolved: +\d{4}-/);
    assertEquals(smtp.messages[1].secure, true);

    // 51 days later the renewed certificate has 9 days left: it fires again.
    await clock.advance(51 * DAY_MS);
    await smtp.waitForCount(3);
    assertMatch(parts(smtp.messages[2].raw).subject, /\[FIRING\] .* expires in (8|9) days/);
    const view = await (await gw.mgmtFetch("/admin/alerts")).json();
    assertEquals(view.active.length, 1);
    assertEquals(view.recent.length, 1);
    assertEquals(view.channels[0].sent, 3);
  } finally {
    await gw?.stop();
    await smtp.stop();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});

Deno.test("alerts by e-mail: a server without STARTTLS gets nothing; the failure is counted, the password never logged", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gw-alerts-mail-" });
  const smtpCert = await selfSigned(dir, "smtp", 30);
  const serving = await selfSigned(dir, "serving", 5);
  // Plain SMTP only (no STARTTLS offered), AUTH not offered either.
  const smtp = await startSmtpServer();
  const clock = new ManualClock();
  let gw: TestGateway | undefined;
  try {
    gw = await startTestGateway(mailAlerts(smtp.port, smtpCert.certPath), {
      tls: { certPath: serving.certPath, keyPath: serving.keyPath },
      clock,
    });
    let channel: Record<string, unknown> = {};
    await waitFor(async () => {
      channel = (await (await gw!.mgmtFetch("/admin/alerts")).json()).channels[0];
      return channel.failed === 1;
    }, { timeoutMs: 15_000, description: "the mail channel gave the notice up" });
    assertEquals(channel.failed, 1);
    assertEquals(channel.sent, 0);
    assertEquals(smtp.messages.length, 0);
    assertMatch(String(channel.last_error), /^SMTP 127\.0\.0\.1:\d+: .*STARTTLS/i);
    assert(!gw.logs.join("\n").includes("smtp-pass-123456"), "the SMTP password was logged");
  } finally {
    await gw?.stop();
    await smtp.stop();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});
