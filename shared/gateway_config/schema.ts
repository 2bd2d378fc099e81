/**
 * The one description of every table of the gateway configuration. Validation, the TOML writer
 * and the generated reference in docs/configuration.md all read these tables (and the option
 * tables of the component types, registry.ts), so a key is added or a default changed here and nowhere else.
 */
import { z } from "zod";
import { field, type TableSpec } from "./fields.ts";
import {
  BACKEND_SERVICES,
  DEFAULT_CONTENT_LIMITS,
  ENDPOINT_SERVICES,
  LOAD_BALANCING,
  LOG_LEVELS,
} from "./types.ts";
import { absolutePath, httpUrl, int, names, port, positive, text } from "./values.ts";
import { GATEWAY_CODE_PATTERN } from "../tokens.ts";
import { componentNames } from "./registry.ts";
import { QUEUE_NATS_FIELDS, QUEUE_STORE_FIELD } from "./components/mod.ts";

/** A built-in backend service or one registered by an embedding program (custom_types.ts). */
const backendService = () =>
  z.string().superRefine((value, ctx) => {
    const known = componentNames("backend");
    if (!known.includes(value)) {
      ctx.addIssue({ code: "invalid_value", values: known, input: value });
    }
  });

/** Scalar keys at the top of the file. */
export const TOP_LEVEL: TableSpec = {
  transforms_path: field(
    "string",
    text(),
    "Directory of transform (JOLT) files, relative to the main config file's directory.",
    {
      default: "transforms",
      example: "transforms",
    },
  ),
  pipelines_path: field(
    "string",
    text(),
    "Directory whose `*.toml` files add endpoints, backends, targets, middleware and pipelines; relative to the main config file's directory.",
    {
      example: "pipelines",
    },
  ),
};

/** Tables at the top of the file, in the order the writer emits them. */
export const SECTIONS = [
  "cloud",
  "network",
  "endpoints",
  "backends",
  "targets",
  "middleware",
  "pipelines",
  "proxy",
  "management",
  "logging",
  "runtime",
  "audit",
  "dicom",
  "tracking",
  "alerts",
] as const;

/** `[cloud]`. */
export const CLOUD: TableSpec = {
  enabled: field(
    "boolean",
    z.boolean(),
    "Must be true for the gateway to accept cloud authorization.",
    {
      default: false,
      example: true,
    },
  ),
  url: field(
    "string",
    httpUrl(),
    "Base URL of the cloud service (the pinned issuer of machine tokens).",
    {
      requiredWhen: "`enabled = true`",
      example: "https://cloud.example.com",
    },
  ),
  gateway_code: field(
    "string",
    text().regex(
      GATEWAY_CODE_PATTERN,
      "must be 1-64 letters, digits, `.`, `_` or `-`, starting with a letter or digit",
    ),
    "The gateway code (instance id) used when the gateway authorizes itself (`POST /{prefix}/authorize` without a code); when set, a machine token for another code is refused.",
    {
      defaultDoc: "the host name (characters other than letters, digits, `.`, `_`, `-` become `-`)",
      example: "edge-berlin-1",
    },
  ),
  state_dir: field(
    "string",
    text(),
    "Directory of the cloud state: the age-encrypted machine token, the configuration pulled from the cloud and its version, the generated management token, the lock of the running gateway; relative to `GATEWAY_STATE_DIR` when it is set, else to the main config file's directory. Must be writable.",
    {
      default: "state",
      example: "/var/lib/gateway",
    },
  ),
  allowed_env: field(
    "array of strings",
    names(),
    "Environment variables a configuration pushed from the cloud may reference as `${NAME}`; any other reference in it is refused (the local file may use every variable).",
    { default: [], example: ["HAPI_URL", "S3_REGION"] },
  ),
  data_dir: field(
    "string",
    text(),
    "The only directory a configuration pushed from the cloud may name (storage roots, DICOM storage_dir, certificates); relative to `GATEWAY_STATE_DIR` when it is set, else to the main config file's directory.",
    { default: "data", example: "/var/lib/gateway/data" },
  ),
  renew_before_days: field(
    "number",
    positive(),
    "Renew the machine token this many days before it expires (to try renewal, set it close to the token's 30-day life).",
    { defaultDoc: "a third of the token's life (10 days)", example: 29.9 },
  ),
  status_interval_secs: field(
    "integer",
    int(1, 3600),
    "Seconds between status reports (health, uptime, pipelines) to the cloud service.",
    {
      default: 60,
      example: 30,
    },
  ),
};

/** `[network.<name>]`. */
export const NETWORK: TableSpec = {
  bind: field("string", text(), "Address the HTTP listener binds.", {
    default: "0.0.0.0",
    example: "127.0.0.1",
  }),
  port: field("integer", port(), "TCP port of the HTTP listener (1-65535).", {
    default: 8080,
    example: 8443,
  }),
  tls_cert_path: field(
    "string",
    text(),
    "PEM certificate chain; with `tls_key_path` the listener speaks TLS (ALPN h2, http/1.1).",
    {
      path: "config",
      requiredWhen: "`tls_key_path` is set",
      example: "certs/gateway.pem",
    },
  ),
  tls_key_path: field("string", text(), "PEM private key of `tls_cert_path`.", {
    path: "config",
    requiredWhen: "`tls_cert_path` is set",
    example: "certs/gateway-key.pem",
  }),
  connection_guard: field(
    "boolean",
    z.boolean(),
    "Guard the listener against slow and greedy clients (the three keys below). Turn it off only behind a proxy that enforces its own timeouts.",
    { default: true, example: false },
  ),
  header_timeout_secs: field(
    "number",
    positive(),
    "Seconds a new connection has to send its first request head (TLS: its first bytes).",
    { default: 10, example: 5 },
  ),
  idle_timeout_secs: field(
    "number",
    positive(),
    "Seconds without a byte in either direction before a connection is closed (keep longer than the slowest backend's timeout_secs).",
    { default: 120, example: 300 },
  ),
  max_connections_per_ip: field(
    "integer",
    int(1),
    "Open connections allowed from one client address; more are closed at once.",
    { default: 256, example: 1000 },
  ),
};

/** `[network.<name>.http3]`. */
export const HTTP3_LISTENER: TableSpec = {
  bind: field("string", text(), "Address the QUIC (UDP) listener binds.", {
    defaultDoc: "the network's `bind`",
    example: "0.0.0.0",
  }),
  port: field("integer", port(), "UDP port of the QUIC listener.", {
    defaultDoc: "the network's `port`",
    example: 8443,
  }),
  cert_path: field("string", text(), "PEM certificate chain for TLS 1.3.", {
    path: "config",
    required: true,
    defaultDoc: "the network's `tls_cert_path`",
    example: "certs/gateway.pem",
  }),
  key_path: field("string", text(), "PEM private key of `cert_path`.", {
    path: "config",
    required: true,
    defaultDoc: "the network's `tls_key_path`",
    example: "certs/gateway-key.pem",
  }),
};

/** `[endpoints.<name>]` (besides `options`). */
export const ENDPOINT: TableSpec = {
  service: field(
    "string",
    z.enum(ENDPOINT_SERVICES),
    `Endpoint service type: ${ENDPOINT_SERVICES.join(", ")}.`,
    {
      required: true,
      example: "fhir",
    },
  ),
  networks: field(
    "array of strings",
    names(),
    "Networks that serve this endpoint; empty means every network.",
    {
      default: [],
      example: ["public"],
    },
  ),
};

/** `[backends.<name>]` (besides `options` and `health_check`). */
export const BACKEND: TableSpec = {
  service: field(
    "string",
    backendService(),
    `Backend service type: ${
      BACKEND_SERVICES.join(", ")
    } (or one a program embedding the gateway registered).`,
    {
      required: true,
      example: "http",
    },
  ),
  targets: field(
    "array of strings",
    names(),
    "Names of `[targets.*]` to balance over (http, fhir and dicomweb backends); each target URL is a base URL.",
    {
      default: [],
      example: ["api_a", "api_b"],
    },
  ),
  required: field(
    "boolean",
    z.boolean(),
    "Tee backends only (not the first of a pipeline): a failure of this backend fails the request.",
    {
      default: false,
      example: true,
    },
  ),
  timeout_secs: field(
    "number",
    positive(),
    "Whole-call timeout in seconds: until the answer's last byte, not only its headers.",
    {
      default: 30,
      example: 5,
    },
  ),
  max_response_size: field(
    "integer",
    int(1),
    "Largest answer accepted from this backend, in bytes (502 `upstream_response_too_large`, or the stream cut where it passes). Not for `echo` and `storage`, whose answers are local.",
    { defaultDoc: "`[proxy.content_limits] max_body_size`", example: 2_147_483_648 },
  ),
  retries: field("integer", int(0), "Retries of idempotent requests after a connection error.", {
    default: 1,
    example: 2,
  }),
  load_balancing: field(
    "string",
    z.enum(LOAD_BALANCING),
    `Target selection: ${LOAD_BALANCING.join(", ")}.`,
    {
      default: "round_robin",
      example: "least_requests",
    },
  ),
  max_failures: field(
    "integer",
    int(1),
    "Consecutive failures that take a target out of rotation.",
    {
      default: 3,
      example: 5,
    },
  ),
  cooldown_secs: field("number", positive(), "Seconds a failed target stays out of rotation.", {
    default: 10,
    example: 30,
  }),
  eject_last_target: field(
    "boolean",
    z.boolean(),
    "Passive health may take out the last target still in rotation (a backend with one " +
      "`base_url` included): requests then get 502 `no_healthy_target` at once for " +
      "`cooldown_secs`. Off, that target stays in rotation and each request tries it (as " +
      "Envoy's outlier detection keeps a share of hosts); active health checks still take any " +
      "target out.",
    { defaultDoc: "`false`", example: true },
  ),
  match: field(
    "table of strings",
    z.record(z.string(), z.string()),
    "Metadata routing: the backend takes part only in requests whose metadata has every listed key with the listed value.",
    {
      example: { tenant: "a" },
    },
  ),
};

/** `[backends.<name>.health_check]`: active health checks of the targets. */
/** `[backends.<name>.queue]`: durable delivery (docs/delivery.md). */
export const QUEUE: TableSpec = {
  ...QUEUE_STORE_FIELD,
  dir: field(
    "string",
    text(),
    "Directory of the queue's messages (one file each, fsynced before the sender is answered). " +
      "Relative to `GATEWAY_STATE_DIR` when it is set, else to the main config file's directory; " +
      "one directory per backend.",
    {
      path: "state",
      defaultDoc: "`queues/<backend>` in `GATEWAY_STATE_DIR`, else beside the config file",
      example: "/var/lib/gateway/q/pacs",
    },
  ),
  ordering: field(
    "string",
    z.enum(["fifo", "parallel"]),
    "`fifo`: one message at a time, in the order accepted (a failing head waits); `parallel`: " +
      "up to `concurrency` at once.",
    { default: "fifo", example: "parallel" },
  ),
  concurrency: field("integer", int(1, 256), 'Deliveries at once with `ordering = "parallel"`.', {
    default: 4,
    example: 8,
  }),
  max_messages: field(
    "integer",
    int(1),
    "Messages held (waiting and dead-lettered); beyond, new requests get 503 `queue_full`.",
    { default: 100_000, example: 1_000_000 },
  ),
  max_bytes: field(
    "integer",
    int(1024),
    "Bytes held; beyond, new requests get 507 `queue_full`.",
    { default: 10_737_418_240, example: 107_374_182_400 },
  ),
  max_attempts: field(
    "integer",
    int(0),
    "Deliveries tried before a message goes to the dead letters; 0: no limit (only `max_age_secs`).",
    { default: 0, example: 50 },
  ),
  max_age_secs: field(
    "integer",
    int(1),
    "Age after which an undelivered message goes to the dead letters.",
    { default: 604_800, example: 86_400 },
  ),
  initial_backoff_ms: field("integer", int(1), "Wait before the first retry.", {
    default: 1000,
    example: 500,
  }),
  max_backoff_ms: field("integer", int(1), "Longest wait between retries (doubling, jittered).", {
    default: 300_000,
    example: 60_000,
  }),
  fsync: field(
    "boolean",
    z.boolean(),
    "Flush each message to disk before answering the sender (off only for disposable traffic).",
    { default: true, example: false },
  ),
  fhir_conditional_create: field(
    "boolean",
    z.boolean(),
    "`fhir` backends: a create (POST of a resource with an `identifier`) is delivered with " +
      "`If-None-Exist: identifier=<system>|<value>`, so that a delivery repeated after a crash " +
      "finds the resource instead of creating a second one.",
    { default: false, example: true },
  ),
  ...QUEUE_NATS_FIELDS,
};

export const HEALTH_CHECK: TableSpec = {
  path: field(
    "string",
    absolutePath(),
    "Path requested on each target (GET); a 2xx answer is healthy.",
    {
      required: true,
      example: "/health",
    },
  ),
  interval_secs: field("number", positive(), "Seconds between checks.", {
    default: 10,
    example: 5,
  }),
  timeout_secs: field("number", positive(), "Timeout of one check, in seconds.", {
    default: 2,
    example: 1,
  }),
  healthy_threshold: field(
    "integer",
    int(1),
    "Consecutive successful checks that bring a target back.",
    {
      default: 1,
      example: 2,
    },
  ),
};

/** `[targets.<name>]`. */
export const TARGET: TableSpec = {
  url: field("string", httpUrl(), "Base URL of the target (http:// or https://).", {
    required: true,
    example: "http://10.0.0.5:8080/api",
  }),
};

/** `[middleware.<name>]` (besides `options`). */
export const MIDDLEWARE: TableSpec = {
  type: field("string", text(), "Middleware type; see the middleware options below.", {
    required: true,
    example: "transform",
  }),
};

/** `[pipelines.<name>]`. */
export const PIPELINE: TableSpec = {
  endpoints: field(
    "array of strings",
    names().min(1),
    "Endpoints whose traffic enters this pipeline (an endpoint belongs to one pipeline).",
    {
      required: true,
      example: ["fhir_in"],
    },
  ),
  middleware: field(
    "array of strings",
    names(),
    "Middleware applied in this order on requests, and on responses.",
    {
      default: [],
      example: ["to_fhir"],
    },
  ),
  backends: field(
    "array of strings",
    names().min(1),
    "Backends called; the first is the primary, the others are tees.",
    {
      required: true,
      example: ["fhir_server"],
    },
  ),
};

/** `[proxy.content_limits]`. */
export const CONTENT_LIMITS: TableSpec = {
  max_body_size: field("integer", int(1), "Largest request or response body read, in bytes.", {
    default: DEFAULT_CONTENT_LIMITS.max_body_size,
    example: 52_428_800,
  }),
  max_csv_rows: field("integer", int(1), "Most CSV rows normalized.", {
    default: DEFAULT_CONTENT_LIMITS.max_csv_rows,
    example: 50_000,
  }),
  max_csv_columns: field(
    "integer",
    int(1),
    "Most fields of one CSV row, the header row included (413 `too_many_csv_columns`).",
    { default: DEFAULT_CONTENT_LIMITS.max_csv_columns, example: 200 },
  ),
  max_csv_cell_bytes: field(
    "integer",
    int(1),
    "Largest CSV cell, in UTF-8 bytes as sent (quotes included; 413 `csv_cell_too_large`).",
    { default: DEFAULT_CONTENT_LIMITS.max_csv_cell_bytes, example: 1_048_576 },
  ),
  max_xml_depth: field("integer", int(1), "Deepest XML nesting accepted.", {
    default: DEFAULT_CONTENT_LIMITS.max_xml_depth,
    example: 64,
  }),
  max_multipart_files: field("integer", int(1), "Most files in one multipart body.", {
    default: DEFAULT_CONTENT_LIMITS.max_multipart_files,
    example: 20,
  }),
  max_form_fields: field("integer", int(1), "Most fields in one form body.", {
    default: DEFAULT_CONTENT_LIMITS.max_form_fields,
    example: 500,
  }),
  max_json_depth: field("integer", int(1, 10_000), "Deepest JSON nesting accepted.", {
    default: DEFAULT_CONTENT_LIMITS.max_json_depth,
    example: 64,
  }),
  max_xml_attributes: field("integer", int(1), "Most attributes of one XML element.", {
    default: DEFAULT_CONTENT_LIMITS.max_xml_attributes,
    example: 64,
  }),
  max_xml_references: field(
    "integer",
    int(1),
    "Most entity and character references (`&amp;`, `&#65;`) in one XML body, in text and attribute values (413 `too_many_xml_references`).",
    { default: DEFAULT_CONTENT_LIMITS.max_xml_references, example: 500_000 },
  ),
  body_timeout_secs: field(
    "number",
    positive(),
    "Seconds a client's body may take to arrive when the gateway reads it (a middleware or an endpoint that needs the data); 408 `request_body_timeout`. A body forwarded as a stream is bounded by the backend's `timeout_secs`.",
    { default: DEFAULT_CONTENT_LIMITS.body_timeout_secs, example: 30 },
  ),
  spool_threshold: field(
    "integer",
    int(0),
    "Bytes of a request body sent to several backends (a pipeline with tee destinations) held in memory; a larger body is spooled to a temporary file (mode 0600 in `TMPDIR`, removed once every backend has read it).",
    { default: DEFAULT_CONTENT_LIMITS.spool_threshold, example: 4_194_304 },
  ),
};

/** `[proxy]`: holds only `content_limits`. */
export const PROXY: TableSpec = {};

/** `[management]`. */
export const MANAGEMENT: TableSpec = {
  enabled: field("boolean", z.boolean(), "Serve the management API.", {
    default: true,
    example: false,
  }),
  bind: field("string", text(), "Address of the management listener (loopback by default).", {
    default: "127.0.0.1",
    example: "0.0.0.0",
  }),
  port: field("integer", port(), "TCP port of the management listener.", {
    default: 9090,
    example: 9091,
  }),
  prefix: field(
    "string",
    z.string()
      .transform((v) => v.replace(/^\/+|\/+$/g, ""))
      .pipe(
        z.string().regex(
          /^[A-Za-z0-9_-]+$/,
          "must be one path segment of letters, digits, `_` or `-`",
        ),
      ),
    "Path prefix of the management routes, one segment (surrounding slashes are dropped).",
    { default: "admin", example: "ops" },
  ),
  token_file: field(
    "string",
    text(),
    "File holding the bearer token every management route except `/healthz` and `/readyz` requires " +
      "(relative to the main config file's directory). `GATEWAY_MANAGEMENT_TOKEN` overrides it; " +
      "without either, a token is generated at first start into `<state_dir>/management-token` (0600).",
    { path: "config", example: "/etc/gateway/management-token" },
  ),
  allowed_hosts: field(
    "array of strings",
    names(),
    "Host names (besides IP addresses and `localhost`) that requests may carry in `Host`; " +
      "any other name is refused (DNS rebinding).",
    { default: [], example: ["gateway-1.hospital.internal"] },
  ),
  tls_cert_path: field(
    "string",
    text(),
    "PEM certificate chain; with `tls_key_path` the management API speaks HTTPS. Required when " +
      "`bind` is not a loopback address.",
    {
      path: "config",
      requiredWhen: "`tls_key_path` is set, or `bind` is not loopback",
      example: "certs/mgmt.pem",
    },
  ),
  tls_key_path: field("string", text(), "PEM private key of `tls_cert_path`.", {
    path: "config",
    requiredWhen: "`tls_cert_path` is set",
    example: "certs/mgmt-key.pem",
  }),
  console: field(
    "boolean",
    z.boolean(),
    "Serve the operations console at `/{prefix}/console` on this listener (docs/operations.md): " +
      "browser pages behind a sign-in with the management token.",
    { default: true, example: false },
  ),
  console_url: field(
    "string",
    httpUrl(),
    "Where operators' browsers reach the console (for instance through a bastion or a VPN " +
      "name): reported to the cloud, whose gateway page links to it. Only the link goes to the " +
      "cloud, never what the console shows. Unset: no link.",
    { example: "https://gateway-1.hospital.internal:9090/admin/console" },
  ),
};

/** `[logging]`. */
export const LOGGING: TableSpec = {
  level: field(
    "string",
    z.enum(LOG_LEVELS),
    `Least severe level written: ${LOG_LEVELS.join(", ")}.`,
    {
      default: "info",
      example: "debug",
    },
  ),
  format: field("string", z.enum(["json", "text"]), "`json` (one object per line) or `text`.", {
    default: "json",
    example: "text",
  }),
  log_identifiers: field(
    "boolean",
    z.boolean(),
    "Write request paths whole in the request log. Off: FHIR ids, DICOM UIDs and the path below other endpoints' prefixes are replaced by placeholders (patient identifiers stay out of the log).",
    { default: false, example: true },
  ),
};

/** `[runtime]`: how the gateway process runs. */
export const RUNTIME: TableSpec = {
  shutdown_grace_secs: field(
    "integer",
    int(0, 3600),
    "Seconds SIGTERM waits for in-flight requests and DIMSE associations to finish before it " +
      "closes what remains; then the delivery queues stop, the audit trail is written and the " +
      "process exits 0.",
    { default: 10, example: 30 },
  ),
  workers: field(
    "integer",
    int(1, 64),
    "Data-plane isolates: the main thread and `workers - 1` worker threads, each serving the HTTP " +
      "listeners on the same ports (SO_REUSEPORT: the kernel spreads connections). DIMSE and " +
      "HTTP/3 listeners, the management API, delivery, the audit file and the cloud client run in " +
      "the main thread. Read at start; a reload that changes it takes effect at the next restart.",
    { defaultDoc: "`GATEWAY_WORKERS`, else the number of CPU cores", example: 4 },
  ),
  max_buffered_bytes: field(
    "integer",
    int(1),
    "Memory admission: bytes of bodies each data-plane isolate may hold in memory to parse or " +
      "transform them (a `transform`, a check that reads the data, a tee's in-memory copy, an " +
      "answer a middleware reads), counted from the declared length before a byte is read. A " +
      "buffered request that does not fit is answered 503 `memory_pressure` with `Retry-After: " +
      "1`; bodies that stream through are never counted. A parsed JSON body takes 3-8 times its " +
      "size in the heap (docs/data-plane.md). Per isolate, since each has its own heap limit.",
    {
      defaultDoc: "1/8 of the isolate's V8 heap limit (`--max-old-space-size`)",
      example: 268_435_456,
    },
  ),
  watchdog_miss_ms: field(
    "integer",
    int(100, 600_000),
    "Watchdog: a data-plane worker thread that has not answered the main thread's heartbeat for " +
      "this long is unresponsive (its event loop is blocked): logged, shown in " +
      "`/{prefix}/workers` and `gateway_worker_unresponsive`, and `/readyz` answers 503 while it " +
      "lasts. The main thread is watched by a thread of its own with the same threshold " +
      "(docs/data-plane.md).",
    { default: 2000, example: 1000 },
  ),
  watchdog_kill_ms: field(
    "integer",
    int(0, 3_600_000),
    "Watchdog: a worker thread unresponsive this long is terminated, its listening sockets are " +
      "shut down so the kernel sends new connections to the other isolates, and a new worker " +
      "takes its place. Deno cannot stop a thread in synchronous JavaScript, so the terminated " +
      "thread may run on (a core busy): it is shown in `/{prefix}/workers` " +
      "(`lingering_threads`) and `gateway_worker_threads_lingering` until it ends, and " +
      "`watchdog_exit_ms` bounds it. 0: never (it stays unresponsive until its loop returns). A " +
      "value below `watchdog_miss_ms` counts as `watchdog_miss_ms`.",
    { default: 10_000, example: 30_000 },
  ),
  watchdog_exit_ms: field(
    "integer",
    int(0, 3_600_000),
    "Watchdog of the process (the `gateway` executable only): when the main thread has not " +
      "answered for this long, or a worker thread terminated by `watchdog_kill_ms` still runs " +
      "this long after (Deno cannot stop it; it keeps a core busy), the process exits with " +
      "status 70 for its supervisor (systemd, a container runtime) to start it again (after a " +
      "shutdown as on SIGTERM, for a lingering thread). A program " +
      "embedding the gateway keeps its process: the lingering thread is logged. 0: never.",
    { default: 60_000, example: 120_000 },
  ),
};

/** `[audit]`: the audit trail (docs/security.md); absent: no audit records. */
export const AUDIT: TableSpec = {
  file: field(
    "string",
    text(),
    "JSON Lines file of audit records, one per request, each carrying the SHA-256 of the one " +
      "before (`gateway audit verify` checks the chain); rotated by size. Relative to " +
      "`GATEWAY_STATE_DIR` when it is set, else to the main config file's directory; created 0600.",
    {
      path: "state",
      requiredWhen: "neither `fhir_backend` nor `[audit.syslog]` is set",
      example: "audit/audit.jsonl",
    },
  ),
  max_file_bytes: field(
    "integer",
    int(4096),
    "Size at which the file is rotated (renamed to `<file>.<UTC time>`, a new file started; the " +
      "chain continues into it).",
    { default: 104_857_600, example: 1_073_741_824 },
  ),
  keep_files: field(
    "integer",
    int(0, 100_000),
    "Rotated files kept (the oldest beyond this are deleted); 0 keeps every one.",
    { default: 0, example: 30 },
  ),
  durability: field(
    "string",
    z.enum(["sync", "batched"]),
    "`sync`: an answer (HTTP response, 202 of a queued request, DIMSE response) is released only " +
      "once its record is in the file and fdatasync'ed; the records of concurrent requests share " +
      "one write and one fdatasync (group commit). `batched`: records are written in the " +
      "background every `flush_interval_ms`, so a crash loses the last moments' records; the " +
      "next start then writes an `audit.gap` record and logs an error. Applies to `file` (the " +
      "FHIR AuditEvents are always sent in the background).",
    { default: "sync", example: "batched" },
  ),
  group_commit_ms: field(
    "integer",
    int(0, 1000),
    'With `durability = "sync"`: how long a record waits for others to share its write and ' +
      "fdatasync when no write is running (0: the next turn of the event loop). While a write " +
      "runs the next batch gathers anyway, and a batch of 512 is written at once; a longer wait " +
      "lowers the number of fdatasyncs at low load but adds to every answer's latency.",
    { default: 0, example: 2 },
  ),
  queue_size: field(
    "integer",
    int(1, 1_000_000),
    "Records held in memory waiting to be written. When full, records are dropped, counted in " +
      "`gateway_audit_dropped_total`, logged as an error and noted in the trail itself; with " +
      '`durability = "sync"` their requests are answered 503 `audit_unavailable` instead.',
    { default: 10_000, example: 50_000 },
  ),
  flush_interval_ms: field(
    "integer",
    int(10, 60_000),
    'With `durability = "batched"`: longest time a record waits in memory before it is ' +
      "written (sooner when 512 are waiting).",
    { default: 200, example: 1000 },
  ),
  redact_query: field(
    "array of strings",
    z.array(text()),
    "Query parameters whose values are written as `[redacted]`, besides the built-in ones " +
      "(`access_token`, `api_key`, `apikey`, `client_secret`, `code`, `key`, `password`, " +
      "`secret`, `token`).",
    { default: [], example: ["ssn"] },
  ),
  fhir_backend: field(
    "string",
    text(),
    "A `fhir` or `http` backend that also receives every record as a FHIR R4 `AuditEvent`, in " +
      "batch Bundles posted to its base URL.",
    { requiredWhen: "neither `file` nor `[audit.syslog]` is set", example: "audit-server" },
  ),
  fhir_batch_size: field(
    "integer",
    int(1, 1000),
    "AuditEvents per batch Bundle sent to `fhir_backend`.",
    { default: 100, example: 20 },
  ),
  source_name: field(
    "string",
    text(),
    "Name of this gateway in the AuditEvents (`source.observer`).",
    { defaultDoc: "the host name", example: "edge-gateway-1" },
  ),
};

/** `[dicom.peers.<AET>]` (DICOM, issue 4): a remote AE, e.g. a C-MOVE destination. */
export const DICOM_PEER: TableSpec = {
  host: field("string", text(), "Hostname or IP address of the AE.", {
    required: true,
    example: "10.0.0.7",
  }),
  port: field("integer", port(), "DIMSE port of the AE.", { required: true, example: 104 }),
  use_tls: field("boolean", z.boolean(), "Associate with this AE over DICOM TLS.", {
    default: false,
    example: true,
  }),
  ca_cert_path: field(
    "string",
    text(),
    "PEM CA certificates the AE's certificate is checked against (with `use_tls`; default: the " +
      "system's roots).",
    { path: "config", example: "certs/viewer-ca.pem" },
  ),
  cert_path: field(
    "string",
    text(),
    "PEM client certificate presented to the AE (with `use_tls`).",
    {
      path: "config",
      example: "certs/gateway.pem",
    },
  ),
  key_path: field("string", text(), "PEM private key of `cert_path`.", {
    path: "config",
    example: "certs/gateway-key.pem",
  }),
};
