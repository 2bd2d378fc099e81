/**
 * `[alerts]` in the configuration registry: validation (defaults, kind- and type-specific keys,
 * references to channels, queued backends and pipelines, SMTP credentials only over TLS), the
 * TOML writer's round trip, the secret walk (webhook URL and headers, SMTP password) and the
 * generated reference.
 */
import { assert, assertEquals, assertMatch } from "./assert.ts";
import {
  configReferenceMarkdown,
  literalSecretPaths,
  validateConfigText,
  writeConfigToml,
} from "../shared/gateway_config/mod.ts";
import { parse } from "smol-toml";

const BASE = `
[endpoints.in]
service = "http"
[endpoints.in.options]
path_prefix = "/in"
[backends.out]
service = "http"
[backends.out.options]
base_url = "http://127.0.0.1:1"
[backends.out.queue]
dir = "/tmp/q"
[backends.echo]
service = "echo"
[pipelines.p]
endpoints = ["in"]
backends = ["out"]
`;

const ALERTS = `
[alerts]
evaluate_interval_secs = 10
[alerts.rules.dead]
kind = "dead_letters"
severity = "critical"
channels = ["hook", "mail"]
backends = ["out"]
[alerts.rules.errors]
kind = "error_rate"
channels = ["hook"]
max_ratio = 0.1
min_requests = 5
[alerts.channels.hook]
type = "webhook"
url = "https://hooks.example/T000/B000/XXXX"
headers = { Authorization = "Bearer literal" }
[alerts.channels.mail]
type = "email"
host = "smtp.example.org"
user = "gw"
password = "pw"
from = "gateway@example.org"
to = ["ops@example.org"]
`;

function validate(text: string) {
  return validateConfigText(text, "gateway.toml");
}

Deno.test("alerts config: defaults applied per kind and type; written back equal", () => {
  const { config, problems } = validate(BASE + ALERTS);
  assertEquals(problems, []);
  const alerts = config!.alerts!;
  assertEquals(alerts.enabled, true);
  assertEquals(alerts.evaluate_interval_secs, 10);
  assertEquals(alerts.rules.dead.threshold, 1);
  assertEquals(alerts.rules.dead.min_interval_minutes, 15);
  assertEquals(alerts.rules.errors.window_minutes, 5);
  assertEquals(alerts.rules.errors.severity, "warning");
  assertEquals(alerts.channels.mail.port, 587);
  assertEquals(alerts.channels.mail.security, "starttls");
  const again = validate(writeConfigToml(config!));
  assertEquals(again.problems, []);
  assertEquals(again.config!.alerts, alerts);
});

Deno.test("alerts config: webhook URL, header values and SMTP password are secrets", () => {
  const paths = literalSecretPaths(parse(BASE + ALERTS) as Record<string, unknown>);
  assertEquals(paths.filter((p) => p.startsWith("alerts")).sort(), [
    "alerts.channels.hook.headers.Authorization",
    "alerts.channels.hook.url",
    "alerts.channels.mail.password",
  ]);
});

Deno.test("alerts config: wrong keys, kinds and references are refused where they are", () => {
  const { problems } = validate(
    BASE + `
[alerts.rules.a]
kind = "queue_age"
channels = ["nope"]
backends = ["echo", "ghost"]
threshold = 3
[alerts.rules.b]
kind = "disk_space"
channels = ["hook"]
[alerts.rules.c]
kind = "error_rate"
channels = ["hook"]
pipelines = ["q"]
[alerts.channels.hook]
type = "webhook"
url = "ftp://x"
[alerts.channels.mail]
type = "email"
host = "smtp.example.org"
security = "none"
user = "u"
password = "p"
from = "not an address"
to = []
`,
  );
  const at = (path: string) => problems.filter((p) => p.path === path).map((p) => p.message);
  assertMatch(at("alerts.rules.a.channels[0]").join(), /no channel `nope`/);
  assertMatch(at("alerts.rules.a.backends[0]").join(), /has no delivery queue/);
  assertMatch(at("alerts.rules.a.backends[1]").join(), /no backend `ghost`/);
  assertMatch(at("alerts.rules.a.threshold").join(), /unknown key/);
  assertMatch(at("alerts.rules.a.max_age_minutes").join(), /missing required key/);
  assertMatch(at("alerts.rules.b.kind").join(), /dead_letters/);
  assertMatch(at("alerts.rules.c.max_ratio").join(), /missing required key/);
  assertMatch(at("alerts.rules.c.pipelines[0]").join(), /no pipeline `q`/);
  assertMatch(at("alerts.channels.hook.url").join(), /http/);
  assertMatch(at("alerts.channels.mail.security").join(), /password in clear/);
  assertMatch(at("alerts.channels.mail.from").join(), /e-mail address/);
  assert(at("alerts.channels.mail.to").length > 0);
});

Deno.test("alerts config: the reference has one table per rule kind and channel type", () => {
  const md = configReferenceMarkdown();
  for (
    const kind of [
      "dead_letters",
      "queue_age",
      "error_rate",
      "certificate_expiry",
      "stuck_worker",
      "component_degraded",
    ]
  ) {
    assert(md.includes(`\`[alerts.rules.<name>]\` with kind = "${kind}"`), kind);
  }
  assert(md.includes('`[alerts.channels.<name>]` with type = "email"'));
  assert(md.includes("`[alerts]`"));
});
