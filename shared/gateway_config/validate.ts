/** Raw TOML table -> validated, defaults-applied GatewayConfig, reporting every problem found. */
import { asTable, checkTable, childPath, isTable, ProblemSink, type TableSpec } from "./fields.ts";
import type { KeyPositions } from "./parse.ts";
import { checkReferences } from "./cross_checks.ts";
import { checkAlerts } from "./components/mod.ts";
import { checkQueueStore } from "./components/mod.ts";
import { AUDIT_SYSLOG, syslogProblems } from "./components/mod.ts";
import {
  AUDIT,
  BACKEND,
  CLOUD,
  CONTENT_LIMITS,
  DICOM_PEER,
  ENDPOINT,
  HEALTH_CHECK,
  HTTP3_LISTENER,
  LOGGING,
  MANAGEMENT,
  MIDDLEWARE,
  NETWORK,
  PIPELINE,
  PROXY,
  QUEUE,
  RUNTIME,
  SECTIONS,
  TARGET,
  TOP_LEVEL,
} from "./schema.ts";
import type { BackendOwner, OptionSchema } from "./component_type.ts";
import { HTTP_LIKE_BACKENDS } from "./components/mod.ts";
import { MANAGEMENT_TOKEN, PIPELINE_TRACKING, TRACKING } from "./components/mod.ts";
import { didYouMean } from "./suggest.ts";
import { componentNames, optionSchemaOf } from "./registry.ts";
import type {
  AuditConfig,
  AuditSyslogConfig,
  BackendConfig,
  CloudConfig,
  ConfigProblem,
  ContentLimits,
  DicomConfig,
  DicomPeerConfig,
  EndpointConfig,
  GatewayConfig,
  HealthCheckConfig,
  Http3ListenerConfig,
  LoggingConfig,
  ManagementConfig,
  ManagementTokenConfig,
  MiddlewareConfig,
  NetworkConfig,
  PipelineConfig,
  PipelineTrackingConfig,
  QueueConfig,
  RuntimeConfig,
  TargetConfig,
  TrackingConfig,
} from "./types.ts";

/** The outcome of validation: `config` is set exactly when `problems` is empty. */
export interface ValidationResult {
  /** The configuration, when it is valid. */
  config?: GatewayConfig;
  /** Every problem found; empty when the configuration is valid. */
  problems: ConfigProblem[];
}

/** Name of the network implied when the file has no `network` table. */
export const DEFAULT_NETWORK_NAME = "default";

/** Names of endpoints, backends, networks, ...: they appear in paths, routes and metrics. */
const NAME = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;

/** Validates a parsed document; `positions` (from parseConfigText) locate problems. */
export function validateConfig(
  raw: unknown,
  positions: KeyPositions = new Map(),
  fileName = "<config>",
): ValidationResult {
  const sink = new ProblemSink(positions, fileName);
  const top = checkTable(sink, raw, TOP_LEVEL, "", [...SECTIONS]);
  const doc = isTable(raw) ? raw : {};
  const config: GatewayConfig = {
    transforms_path: top.transforms_path as string,
    cloud: checkTable(sink, doc.cloud, CLOUD, "cloud") as unknown as CloudConfig,
    network: Object.hasOwn(doc, "network")
      ? named(sink, doc.network, "network", network)
      : { [DEFAULT_NETWORK_NAME]: defaultNetwork() },
    endpoints: named(sink, doc.endpoints, "endpoints", endpoint),
    backends: named(sink, doc.backends, "backends", backend),
    targets: named(sink, doc.targets, "targets", (s, r, path, name) => ({
      name,
      ...(checkTable(s, r, TARGET, path) as Omit<TargetConfig, "name">),
    })),
    middleware: named(sink, doc.middleware, "middleware", middleware),
    pipelines: named(sink, doc.pipelines, "pipelines", pipeline),
    proxy: proxy(sink, doc.proxy),
    management: management(sink, doc.management),
    logging: checkTable(sink, doc.logging, LOGGING, "logging") as unknown as LoggingConfig,
    runtime: checkTable(sink, doc.runtime, RUNTIME, "runtime") as unknown as RuntimeConfig,
    source_files: [],
  };
  if (
    config.cloud.enabled === true && config.cloud.url === undefined && !sink.written("cloud.url")
  ) {
    sink.report(
      "cloud.url",
      "missing `url`: with `enabled = true` the cloud service's base URL is required " +
        '(e.g. url = "https://cloud.example.com")',
    );
  }
  checkManagementExposure(sink, config.management);
  if (top.pipelines_path !== undefined) config.pipelines_path = top.pipelines_path as string;
  if (doc.dicom !== undefined) config.dicom = dicom(sink, doc.dicom);
  if (doc.audit !== undefined) config.audit = audit(sink, doc.audit);
  if (doc.alerts !== undefined) config.alerts = checkAlerts(sink, doc.alerts, config);
  const tracked = Object.values(config.pipelines).some((p) => p.tracking?.enabled);
  if (doc.tracking !== undefined || tracked) {
    // A tracking pipeline without [tracking]: the store with its defaults (in the state directory).
    config.tracking = checkTable(
      sink,
      doc.tracking ?? {},
      TRACKING,
      "tracking",
    ) as unknown as TrackingConfig;
  }
  checkTracking(sink, config);
  checkReferences(sink, config);
  const problems = sortProblems(sink.problems, fileName);
  return problems.length ? { problems } : { config, problems };
}

/** `[pipelines.<name>]` and its `tracking` table. */
function pipeline(sink: ProblemSink, raw: unknown, path: string, name: string): PipelineConfig {
  const out: PipelineConfig = {
    name,
    ...(checkTable(sink, raw, PIPELINE, path, ["tracking"]) as Omit<PipelineConfig, "name">),
  };
  if (isTable(raw) && raw.tracking !== undefined) {
    out.tracking = checkTable(
      sink,
      raw.tracking,
      PIPELINE_TRACKING,
      childPath(path, "tracking"),
    ) as unknown as PipelineTrackingConfig;
  }
  return out;
}

/** `[management]` and its `tokens.<name>` tables. */
function management(sink: ProblemSink, raw: unknown): ManagementConfig {
  const m = checkTable(sink, raw, MANAGEMENT, "management", [
    "tokens",
  ]) as unknown as ManagementConfig;
  if (isTable(raw) && raw.tokens !== undefined) {
    m.tokens = named(sink, raw.tokens, "management.tokens", (s, r, path, name) => {
      const t = { name, ...checkTable(s, r, MANAGEMENT_TOKEN, path) } as ManagementTokenConfig;
      if ((t.token === undefined) === (t.token_file === undefined) && isTable(r)) {
        s.report(path, "set one of `token` (as `${VAR}`) or `token_file`");
      }
      return t;
    });
  }
  return m;
}

/** Content kept at rest needs the key that encrypts it. */
function checkTracking(sink: ProblemSink, config: GatewayConfig): void {
  for (const p of Object.values(config.pipelines)) {
    const t = p.tracking;
    if (t?.enabled && t.content?.length && !config.tracking?.identity_file) {
      sink.report(
        `pipelines.${p.name}.tracking.content`,
        "content is kept encrypted: set `identity_file` in [tracking] (an age identity, made " +
          "with `age-keygen -o tracking.age`, outside the store's directory)",
      );
    }
  }
}

/** `[audit]` and its `syslog` table: at least one sink. */
function audit(sink: ProblemSink, raw: unknown): AuditConfig {
  const a = checkTable(sink, raw, AUDIT, "audit", ["syslog"]) as unknown as AuditConfig;
  if (isTable(raw) && raw.syslog !== undefined) {
    const s = checkTable(
      sink,
      raw.syslog,
      AUDIT_SYSLOG,
      "audit.syslog",
    ) as unknown as AuditSyslogConfig;
    for (const p of syslogProblems(s, "audit.syslog")) sink.report(p.path, p.message);
    a.syslog = s;
  }
  if (
    isTable(raw) && raw.file === undefined && raw.fhir_backend === undefined &&
    raw.syslog === undefined
  ) {
    sink.report(
      "audit",
      "the audit trail needs somewhere to go: set `file` (a JSON Lines file), " +
        "`fhir_backend` (a backend that receives FHIR AuditEvents) or `[audit.syslog]` (a " +
        "syslog collector), or several",
    );
  }
  return a;
}

/** Problems of the main file first, then by file name and line. */
export function sortProblems(problems: ConfigProblem[], mainFile: string): ConfigProblem[] {
  const rank = (p: ConfigProblem) => p.file === mainFile ? 0 : 1;
  return [...problems].sort((a, b) =>
    rank(a) - rank(b) || a.file.localeCompare(b.file) ||
    (a.line ?? Infinity) - (b.line ?? Infinity)
  );
}

type EntryValidator<T> = (sink: ProblemSink, raw: unknown, path: string, name: string) => T;

/** A table of named entries (`[backends.<name>]`); entries with problems are kept, partially. */
function named<T>(
  sink: ProblemSink,
  raw: unknown,
  section: string,
  validate: EntryValidator<T>,
): Record<string, T> {
  const out: Record<string, T> = {};
  for (const [name, value] of Object.entries(asTable(sink, raw, section))) {
    const path = childPath(section, name);
    if (!NAME.test(name)) {
      sink.report(
        path,
        `invalid name \`${name}\`: use letters, digits, \`_\` and \`-\`, starting with a letter or digit`,
      );
      continue;
    }
    out[name] = validate(sink, value, path, name);
  }
  return out;
}

function defaultNetwork(): NetworkConfig {
  return {
    name: DEFAULT_NETWORK_NAME,
    bind: NETWORK.bind.default as string,
    port: NETWORK.port.default as number,
  };
}

function network(sink: ProblemSink, raw: unknown, path: string, name: string): NetworkConfig {
  const table = asTable(sink, raw, path);
  const base = checkTable(sink, table, NETWORK, path, ["http3"]);
  const hasCert = base.tls_cert_path !== undefined;
  if (hasCert !== (base.tls_key_path !== undefined)) {
    const missing = hasCert ? "tls_key_path" : "tls_cert_path";
    sink.report(
      childPath(path, missing),
      `missing \`${missing}\`: set both tls_cert_path and tls_key_path, or neither`,
    );
  }
  const out = { name, ...base } as NetworkConfig;
  const http3Raw = table.http3;
  if (http3Raw !== undefined) {
    // Keys left out fall back to the network's own listener settings.
    const inherited = {
      bind: base.bind,
      port: base.port,
      cert_path: base.tls_cert_path,
      key_path: base.tls_key_path,
    };
    const written = asTable(sink, http3Raw, childPath(path, "http3"));
    const merged = Object.fromEntries(
      Object.entries({ ...inherited, ...written }).filter(([, v]) => v !== undefined),
    );
    out.http3 = checkTable(
      sink,
      merged,
      HTTP3_LISTENER,
      childPath(path, "http3"),
    ) as unknown as Http3ListenerConfig;
  }
  return out;
}

function endpoint(sink: ProblemSink, raw: unknown, path: string, name: string): EndpointConfig {
  const table = asTable(sink, raw, path);
  const base = checkTable(sink, table, ENDPOINT, path, ["options"]);
  const service = base.service as EndpointConfig["service"] | undefined;
  const options = serviceOptions(
    sink,
    optionSchemaOf("endpoint", service) as OptionSchema | undefined,
    `\`${service}\` endpoints`,
    table.options,
    childPath(path, "options"),
    undefined,
  );
  return { name, service, options, networks: base.networks } as EndpointConfig;
}

function backend(sink: ProblemSink, raw: unknown, path: string, name: string): BackendConfig {
  const table = asTable(sink, raw, path);
  const base = checkTable(sink, table, BACKEND, path, ["options", "health_check", "queue"]);
  const service = base.service as BackendConfig["service"] | undefined;
  const targets = (base.targets ?? []) as string[];
  const httpLike = service === undefined ||
    (HTTP_LIKE_BACKENDS as readonly string[]).includes(service);
  if (!httpLike && targets.length) {
    sink.report(
      childPath(path, "targets"),
      `targets apply only to ${HTTP_LIKE_BACKENDS.join(", ")} backends`,
    );
  }
  const out = { name, ...base } as unknown as BackendConfig;
  if (table.health_check !== undefined) {
    const hcPath = childPath(path, "health_check");
    if (!httpLike) {
      sink.report(hcPath, `health_check applies only to ${HTTP_LIKE_BACKENDS.join(", ")} backends`);
    }
    out.health_check = checkTable(
      sink,
      table.health_check,
      HEALTH_CHECK,
      hcPath,
    ) as unknown as HealthCheckConfig;
  }
  if (table.queue !== undefined) {
    out.queue = checkTable(
      sink,
      table.queue,
      QUEUE,
      childPath(path, "queue"),
    ) as unknown as QueueConfig;
    if (isTable(table.queue)) checkQueueStore(sink, table.queue, childPath(path, "queue"));
    if (service === "echo") {
      sink.report(childPath(path, "queue"), "an echo backend answers at once: nothing to queue");
    }
    if (out.queue.fhir_conditional_create === true && service !== "fhir") {
      sink.report(
        childPath(childPath(path, "queue"), "fhir_conditional_create"),
        "applies only to fhir backends",
      );
    }
  }
  out.options = serviceOptions<BackendOwner>(
    sink,
    optionSchemaOf("backend", service),
    `\`${service}\` backends`,
    table.options,
    childPath(path, "options"),
    { targets },
  );
  return out;
}

function middleware(sink: ProblemSink, raw: unknown, path: string, name: string): MiddlewareConfig {
  const table = asTable(sink, raw, path);
  const base = checkTable(sink, table, MIDDLEWARE, path, ["options"]);
  const type = base.type as string | undefined;
  const known = componentNames("middleware");
  const schema = optionSchemaOf("middleware", type) as OptionSchema | undefined;
  if (type !== undefined && !schema) {
    sink.report(
      childPath(path, "type"),
      `unknown middleware type "${type}"${didYouMean(type, known)}; known types: ${
        known.join(", ")
      }`,
    );
  }
  const options = serviceOptions(
    sink,
    schema,
    `\`${type}\` middleware`,
    table.options,
    childPath(path, "options"),
    undefined,
  );
  return { name, type, options } as MiddlewareConfig;
}

/** Checks an options table against the schema of its service or type (skipped when unknown). */
function serviceOptions<Owner>(
  sink: ProblemSink,
  schema: OptionSchema<Owner> | undefined,
  what: string,
  raw: unknown,
  path: string,
  owner: Owner,
): Record<string, unknown> {
  const table = asTable(sink, raw, path);
  if (!schema) return {};
  if (!schema.fields) return structuredClone(table);
  if (Object.keys(schema.fields).length === 0) {
    for (const key of Object.keys(table)) {
      sink.report(childPath(path, key), `${what} take no options`);
    }
    return {};
  }
  const before = sink.problems.length;
  const options = checkTable(sink, table, schema.fields as TableSpec, path);
  if (schema.rules && sink.problems.length === before) {
    for (const rule of schema.rules(options, owner)) {
      sink.report(rule.key ? childPath(path, rule.key) : path, rule.message);
    }
  }
  return options;
}

/** `[dicom]` (DICOM, issue 4): `[dicom.peers.<AET>]` tables of known AEs. */
function dicom(sink: ProblemSink, raw: unknown): DicomConfig {
  const table = asTable(sink, raw, "dicom");
  checkTable(sink, table, {}, "dicom", ["peers"]);
  const peers = named(sink, table.peers, "dicom.peers", (s, r, path, name) => {
    if (name.length > 16) s.report(path, `AE title \`${name}\` is longer than 16 characters`);
    const peer = checkTable(s, r, DICOM_PEER, path) as Omit<DicomPeerConfig, "aet">;
    for (const key of ["ca_cert_path", "cert_path", "key_path"] as const) {
      if (peer[key] !== undefined && peer.use_tls !== true) {
        s.report(childPath(path, key), "applies only when use_tls = true");
      }
    }
    if ((peer.cert_path === undefined) !== (peer.key_path === undefined)) {
      const missing = peer.cert_path === undefined ? "cert_path" : "key_path";
      s.report(
        childPath(path, missing),
        `missing \`${missing}\`: set both cert_path and key_path, or neither`,
      );
    }
    return { aet: name, ...peer };
  });
  return { peers };
}

function proxy(sink: ProblemSink, raw: unknown): { content_limits: ContentLimits } {
  const table = asTable(sink, raw, "proxy");
  checkTable(sink, table, PROXY, "proxy", ["content_limits"]);
  const limits = checkTable(sink, table.content_limits, CONTENT_LIMITS, "proxy.content_limits");
  return { content_limits: limits as unknown as ContentLimits };
}

/** True for an address that only this host can reach. */
export function isLoopbackAddress(bind: string): boolean {
  const bare = bind.replace(/^\[|\]$/g, "").toLowerCase();
  return bare === "localhost" || bare === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(bare);
}

/**
 * The management API controls the gateway: off the loopback interface it must speak TLS (its
 * bearer token would otherwise cross the network in clear), and certificate and key go together.
 */
function checkManagementExposure(sink: ProblemSink, m: ManagementConfig): void {
  const hasCert = m.tls_cert_path !== undefined;
  if (hasCert !== (m.tls_key_path !== undefined)) {
    const missing = hasCert ? "tls_key_path" : "tls_cert_path";
    sink.report(
      `management.${missing}`,
      `missing \`${missing}\`: set both tls_cert_path and tls_key_path, or neither`,
    );
    return;
  }
  if (m.enabled !== false && typeof m.bind === "string" && !isLoopbackAddress(m.bind) && !hasCert) {
    sink.report(
      "management.bind",
      `the management API may bind ${JSON.stringify(m.bind)} (not loopback) only with TLS: ` +
        "set tls_cert_path and tls_key_path in [management], or bind it to 127.0.0.1 and reach " +
        "it through an SSH tunnel or a TLS-terminating proxy on the same host",
    );
  }
}
