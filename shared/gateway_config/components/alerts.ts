/**
 * The tables of alerts (docs/operations.md, "Alerts"): `[alerts]` (how often rules are evaluated,
 * how much is kept), `[alerts.rules.<name>]` (one table per rule kind: a condition on the
 * gateway's own state, its severity, its channels and its rate limit) and
 * `[alerts.channels.<name>]` (one table per channel type: a webhook or SMTP e-mail). The reference,
 * the secret walk and validation read the same specs.
 */
import { z } from "zod";
import {
  asTable,
  checkTable,
  childPath,
  field,
  type ProblemSink,
  type TableSpec,
} from "../fields.ts";
import type { AlertChannelConfig, AlertRuleConfig, AlertsConfig, GatewayConfig } from "../types.ts";
import { hostName, httpUrl, int, names, port, positive, text } from "../values.ts";

/** The conditions a rule may watch. */
export const ALERT_RULE_KINDS = [
  "dead_letters",
  "queue_age",
  "error_rate",
  "certificate_expiry",
  "stuck_worker",
  "component_degraded",
] as const;

/** Where notices go. */
export const ALERT_CHANNEL_TYPES = ["webhook", "email"] as const;

/** Severities, most urgent first. */
export const ALERT_SEVERITIES = ["critical", "warning", "info"] as const;

/** Names of rules and channels: they appear in notices, metrics and the management API. */
const NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

/** A header name (RFC 9110 token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** An e-mail address as SMTP sends it: local part, `@`, a domain (no display name). */
const emailAddress = () =>
  text().max(254).regex(/^[^\s@<>()",;:]+@[^\s@<>()",;:]+$/, "an e-mail address (name@domain)");

/** `[alerts]`. */
export const ALERTS: TableSpec = {
  enabled: field(
    "boolean",
    z.boolean(),
    "Evaluate the rules and send notices; false keeps the tables but sends nothing.",
    { default: true, example: false },
  ),
  evaluate_interval_secs: field(
    "number",
    z.number().min(1).max(3600),
    "Seconds between two evaluations of every rule.",
    { default: 30, example: 15 },
  ),
  gateway_name: field(
    "string",
    text().max(100),
    "How notices name this gateway.",
    { defaultDoc: "`[cloud] gateway_code`, else the host name", example: "edge-berlin-1" },
  ),
  history: field(
    "integer",
    int(1, 1000),
    "Resolved alerts kept in memory for `GET /{prefix}/alerts` and `gwcli alerts`.",
    { default: 100, example: 500 },
  ),
  queue_size: field(
    "integer",
    int(1, 10_000),
    "Notices waiting per channel (a channel that is down); past it the oldest is dropped and " +
      'counted in `gateway_alert_notices_total{outcome="dropped"}`.',
    { default: 100, example: 1000 },
  ),
};

/** Keys every rule has. */
const RULE_COMMON: TableSpec = {
  kind: field(
    "string",
    z.enum(ALERT_RULE_KINDS),
    `What the rule watches: ${ALERT_RULE_KINDS.map((k) => `\`${k}\``).join(", ")}.`,
    { required: true, example: "dead_letters" },
  ),
  severity: field(
    "string",
    z.enum(ALERT_SEVERITIES),
    "`critical`, `warning` or `info`: shown in every notice.",
    { default: "warning", example: "critical" },
  ),
  channels: field(
    "array of strings",
    names().min(1).max(10),
    "The `[alerts.channels.<name>]` that receive the rule's notices.",
    { required: true, example: ["ops_webhook", "oncall_mail"] },
  ),
  min_interval_minutes: field(
    "number",
    z.number().min(0).max(10_080),
    "At most one firing notice of the rule per channel in this many minutes: a rule that fires " +
      "again sooner is held back and notified when the interval ends, if it still fires.",
    { default: 15, example: 60 },
  ),
  repeat_minutes: field(
    "number",
    z.number().min(0).max(10_080),
    "While the rule keeps firing, a reminder every this many minutes; 0: none.",
    { default: 0, example: 240 },
  ),
  send_resolved: field(
    "boolean",
    z.boolean(),
    "Send a resolved notice when the condition clears (to the channels that had the firing one).",
    { default: true, example: false },
  ),
};

const QUEUE_BACKENDS = field(
  "array of strings",
  names(),
  "Backends whose delivery queue (`[backends.<name>.queue]`) is watched.",
  { defaultDoc: "every backend with a queue", example: ["his"] },
);

/** The keys of each rule kind, besides the common ones. */
export const ALERT_RULE_FIELDS: Record<(typeof ALERT_RULE_KINDS)[number], TableSpec> = {
  dead_letters: {
    backends: QUEUE_BACKENDS,
    threshold: field(
      "integer",
      int(1),
      "Fires while a queue holds at least this many dead letters (1: any dead letter).",
      { default: 1, example: 10 },
    ),
    notify_new: field(
      "boolean",
      z.boolean(),
      "While it fires, every new dead letter is notified too (within `min_interval_minutes`: " +
        "the ones that arrive meanwhile make one notice).",
      { default: false, example: true },
    ),
  },
  queue_age: {
    backends: QUEUE_BACKENDS,
    max_age_minutes: field(
      "number",
      positive(),
      "Fires while the oldest message waiting in a queue is older than this.",
      { required: true, example: 15 },
    ),
  },
  error_rate: {
    pipelines: field(
      "array of strings",
      names(),
      "Pipelines watched.",
      { defaultDoc: "every pipeline", example: ["fhir"] },
    ),
    window_minutes: field(
      "number",
      z.number().positive().max(1440),
      "The window over which the ratio is taken (sampled at each evaluation).",
      { default: 5, example: 10 },
    ),
    max_ratio: field(
      "number",
      z.number().positive().max(1),
      "Fires while 5xx answers / requests over the window exceed this ratio.",
      { required: true, example: 0.05 },
    ),
    min_requests: field(
      "integer",
      int(1),
      "Requests the window must hold before the ratio counts (a quiet pipeline's one error does not fire).",
      { default: 20, example: 100 },
    ),
  },
  certificate_expiry: {
    days: field(
      "number",
      positive(),
      "Fires while a certificate expires within this many days (or has expired, or cannot be read).",
      { default: 14, example: 30 },
    ),
    paths: field(
      "array of strings",
      z.array(text().refine((v) => v.startsWith("/"), "an absolute path")).max(100),
      "Absolute paths of further PEM certificate files to check, besides the ones the " +
        "configuration serves or presents (listeners, management API, MLLP and DIMSE TLS, " +
        "backend client certificates).",
      { default: [], example: ["/etc/gateway/upstream-ca.pem"] },
    ),
  },
  stuck_worker: {
    window_minutes: field(
      "number",
      positive(),
      "Fires while a data-plane worker is unresponsive, and for this long after the watchdog " +
        "replaced one.",
      { default: 15, example: 60 },
    ),
  },
  component_degraded: {
    components: field(
      "array of strings",
      names(),
      "Degraded components watched (`queue/<backend>`, `management_token`, …).",
      { defaultDoc: "every component", example: ["queue/his"] },
    ),
  },
};

/** Keys every channel has. */
const CHANNEL_COMMON: TableSpec = {
  type: field(
    "string",
    z.enum(ALERT_CHANNEL_TYPES),
    "`webhook` (an HTTP POST of JSON, Slack and Teams compatible) or `email` (SMTP).",
    { required: true, example: "webhook" },
  ),
  timeout_secs: field(
    "number",
    z.number().positive().max(300),
    "Time one delivery attempt may take.",
    { default: 10, example: 30 },
  ),
  retries: field(
    "integer",
    int(0, 10),
    "Further attempts after a failed one (with back-off); then the notice is dropped and counted.",
    { default: 3, example: 5 },
  ),
};

/** The keys of each channel type, besides the common ones. */
export const ALERT_CHANNEL_FIELDS: Record<(typeof ALERT_CHANNEL_TYPES)[number], TableSpec> = {
  webhook: {
    url: field(
      "string",
      httpUrl(),
      "Where the JSON is posted (a Slack or Teams incoming-webhook URL carries its secret: " +
        "write it as `${VAR}`).",
      { required: true, secret: true, example: "${SLACK_WEBHOOK_URL}" },
    ),
    format: field(
      "string",
      z.enum(["slack", "teams"]),
      "`slack`: `text` and Slack `attachments` (also what Teams' Office 365 connectors and most " +
        "chat tools take); `teams`: `text` and an Adaptive Card attachment, as Teams Workflows " +
        "webhooks expect. Both carry the alert as JSON under `alert`.",
      { default: "slack", example: "teams" },
    ),
    headers: field(
      "table of strings",
      z.record(z.string().regex(HEADER_NAME, "a header name"), z.string().max(8192)),
      "Headers sent with every notice; each value is a credential (write it as `${VAR}`).",
      { example: { Authorization: "Bearer ${ALERT_TOKEN}" } },
    ),
  },
  email: {
    host: field("string", hostName(), "The SMTP server.", {
      required: true,
      example: "smtp.hospital.example",
    }),
    port: field("integer", port(), "Its port (587 submission with STARTTLS, 465 TLS).", {
      default: 587,
      example: 25,
    }),
    security: field(
      "string",
      z.enum(["starttls", "tls", "none"]),
      "`starttls` (the server must offer STARTTLS, else nothing is sent), `tls` (TLS from the " +
        "first byte, port 465) or `none` (plain SMTP: only without `user`, e.g. a relay on loopback).",
      { default: "starttls", example: "tls" },
    ),
    user: field("string", text(), "SMTP user (AUTH PLAIN/LOGIN over TLS only).", {
      example: "${SMTP_USER}",
    }),
    password: field("string", text(), "SMTP password, as `${VAR}`.", {
      secret: true,
      requiredWhen: "`user` is set",
      example: "${SMTP_PASSWORD}",
    }),
    from: field("string", emailAddress(), "The sender address.", {
      required: true,
      example: "gateway@hospital.example",
    }),
    to: field("array of strings", z.array(emailAddress()).min(1).max(50), "Recipients.", {
      required: true,
      example: ["integration-oncall@hospital.example"],
    }),
    subject_prefix: field("string", z.string().max(100), "Put before every subject.", {
      default: "[gateway]",
      example: "[edge-berlin]",
    }),
    ca_path: field(
      "string",
      text(),
      "PEM CA certificates that sign the SMTP server's certificate (a private CA); the " +
        "system's CAs otherwise.",
      { path: "config", example: "/etc/gateway/smtp-ca.pem" },
    ),
  },
};

/** The spec of a rule of `kind` (common keys first); undefined for an unknown kind. */
export function alertRuleSpec(kind: unknown): TableSpec | undefined {
  if (typeof kind !== "string" || !Object.hasOwn(ALERT_RULE_FIELDS, kind)) return undefined;
  return { ...RULE_COMMON, ...ALERT_RULE_FIELDS[kind as keyof typeof ALERT_RULE_FIELDS] };
}

/** The spec of a channel of `type` (common keys first); undefined for an unknown type. */
export function alertChannelSpec(type: unknown): TableSpec | undefined {
  if (typeof type !== "string" || !Object.hasOwn(ALERT_CHANNEL_FIELDS, type)) return undefined;
  return { ...CHANNEL_COMMON, ...ALERT_CHANNEL_FIELDS[type as keyof typeof ALERT_CHANNEL_FIELDS] };
}

/** One entry of each named table, checked by `check`; malformed names reported and skipped. */
function namedEntries<T>(
  sink: ProblemSink,
  raw: unknown,
  section: string,
  check: (table: Record<string, unknown>, path: string, name: string) => T,
): Record<string, T> {
  const out: Record<string, T> = {};
  for (const [name, value] of Object.entries(asTable(sink, raw, section))) {
    const path = childPath(section, name);
    if (!NAME.test(name)) {
      sink.report(
        path,
        `invalid name \`${name}\`: use up to 64 letters, digits, \`_\` and \`-\`, starting with a letter or digit`,
      );
      continue;
    }
    out[name] = check(asTable(sink, value, path), path, name);
  }
  return out;
}

/** A table whose selector key is missing or unknown: its common keys, the rest unreported. */
function checkCommon(
  sink: ProblemSink,
  table: Record<string, unknown>,
  common: TableSpec,
  path: string,
): Record<string, unknown> {
  return checkTable(sink, table, common, path, Object.keys(table));
}

function channel(
  sink: ProblemSink,
  table: Record<string, unknown>,
  path: string,
  name: string,
): AlertChannelConfig {
  const spec = alertChannelSpec(table.type);
  if (!spec) return { name, ...checkCommon(sink, table, CHANNEL_COMMON, path) } as never;
  const c = { name, ...checkTable(sink, table, spec, path) } as AlertChannelConfig;
  if (c.type === "email") {
    if ((c.user === undefined) !== (c.password === undefined)) {
      const missing = c.user === undefined ? "user" : "password";
      sink.report(
        childPath(path, missing),
        `missing \`${missing}\`: set both user and password, or neither`,
      );
    }
    if (c.security === "none" && c.user !== undefined) {
      sink.report(
        childPath(path, "security"),
        'security = "none" would send the SMTP password in clear: use "starttls" or "tls"',
      );
    }
  }
  return c;
}

function rule(
  sink: ProblemSink,
  table: Record<string, unknown>,
  path: string,
  name: string,
  config: GatewayConfig,
  channels: Record<string, AlertChannelConfig>,
): AlertRuleConfig {
  const spec = alertRuleSpec(table.kind);
  if (!spec) return { name, ...checkCommon(sink, table, RULE_COMMON, path) } as never;
  const r = { name, ...checkTable(sink, table, spec, path) } as AlertRuleConfig;
  (r.channels ?? []).forEach((c, i) => {
    if (!Object.hasOwn(channels, c)) {
      const known = Object.keys(channels);
      sink.report(
        `${childPath(path, "channels")}[${i}]`,
        `no channel \`${c}\` in [alerts.channels]` +
          (known.length ? ` (known: ${known.join(", ")})` : ""),
      );
    }
  });
  if (r.kind === "dead_letters" || r.kind === "queue_age") {
    (r.backends ?? []).forEach((b, i) => {
      if (!config.backends[b]) {
        sink.report(`${childPath(path, "backends")}[${i}]`, `no backend \`${b}\``);
      } else if (!config.backends[b].queue) {
        sink.report(
          `${childPath(path, "backends")}[${i}]`,
          `backend \`${b}\` has no delivery queue ([backends.${b}.queue])`,
        );
      }
    });
  }
  if (r.kind === "error_rate") {
    (r.pipelines ?? []).forEach((p, i) => {
      if (!config.pipelines[p]) {
        sink.report(`${childPath(path, "pipelines")}[${i}]`, `no pipeline \`${p}\``);
      }
    });
  }
  return r;
}

/**
 * `[alerts]` with its rules and channels, defaults applied; references to channels, backends
 * (with a queue) and pipelines checked against `config`.
 */
export function checkAlerts(sink: ProblemSink, raw: unknown, config: GatewayConfig): AlertsConfig {
  const table = asTable(sink, raw, "alerts");
  const base = checkTable(sink, table, ALERTS, "alerts", ["rules", "channels"]);
  const channels = namedEntries(
    sink,
    table.channels,
    "alerts.channels",
    (t, path, name) => channel(sink, t, path, name),
  );
  const rules = namedEntries(
    sink,
    table.rules,
    "alerts.rules",
    (t, path, name) => rule(sink, t, path, name, config, channels),
  );
  return { ...base, rules, channels } as AlertsConfig;
}

/** `alerts` as TOML tables, keys equal to their default left out (the writer's rule). */
export function alertsTables(alerts: AlertsConfig): Record<string, unknown> {
  const strip = (value: object, spec: TableSpec) => {
    const source = value as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (const [key, f] of Object.entries(spec)) {
      const v = source[key];
      if (v === undefined) continue;
      if (f.default !== undefined && JSON.stringify(v) === JSON.stringify(f.default)) continue;
      out[key] = v;
    }
    return out;
  };
  const out = strip(alerts, ALERTS);
  const rules = Object.values(alerts.rules);
  const channels = Object.values(alerts.channels);
  if (rules.length) {
    out.rules = Object.fromEntries(
      rules.map((r) => [r.name, strip(r, alertRuleSpec(r.kind) ?? RULE_COMMON)]),
    );
  }
  if (channels.length) {
    out.channels = Object.fromEntries(
      channels.map((c) => [c.name, strip(c, alertChannelSpec(c.type) ?? CHANNEL_COMMON)]),
    );
  }
  return out;
}
