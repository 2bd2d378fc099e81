/**
 * The validated, defaults-applied shape of a gateway configuration.
 *
 * The loader (`parse.ts`/`validate.ts`) turns TOML text into this shape; the cloud service builds it
 * and writes it back to TOML with `writer.ts`. Names of keys follow the TOML file (snake_case).
 */

/** Endpoint service types (ingress). */
export const ENDPOINT_SERVICES = ["http", "fhir", "jmix", "dicomweb", "dicom_scp", "hl7"] as const;
/** Backend service types (egress). */
export const BACKEND_SERVICES = [
  "http",
  "fhir",
  "dicomweb",
  "http3",
  "dicom_scu",
  "storage",
  "echo",
  "hl7",
] as const;
/** An endpoint service type. */
export type EndpointService = typeof ENDPOINT_SERVICES[number];
/** A backend service type. */
export type BackendService = typeof BACKEND_SERVICES[number];
/**
 * A type name registered by a program that embeds the gateway (custom_types.ts): any string,
 * kept apart from the built-in names so that editors still complete those.
 */
export type CustomTypeName = string & Record<never, never>;
/** Target selection strategies of a backend with several targets. */
export const LOAD_BALANCING = ["round_robin", "least_requests", "random"] as const;
/** A target selection strategy. */
export type LoadBalancing = typeof LOAD_BALANCING[number];
/** Log levels, most severe first. */
export const LOG_LEVELS = ["error", "warn", "info", "debug", "trace"] as const;
/** A log level. */
export type LogLevel = typeof LOG_LEVELS[number];

/** `[proxy.content_limits]`: limits applied while reading and normalizing bodies. */
export interface ContentLimits {
  /** Largest body accepted, in bytes (413 `payload_too_large`). */
  max_body_size: number;
  /** Most CSV rows parsed. */
  max_csv_rows: number;
  /** Most fields of one CSV row, the header included (413 `too_many_csv_columns`). */
  max_csv_columns: number;
  /** Largest CSV cell in UTF-8 bytes as sent, quotes included (413 `csv_cell_too_large`). */
  max_csv_cell_bytes: number;
  /** Deepest XML nesting parsed. */
  max_xml_depth: number;
  /** Most files of a multipart body. */
  max_multipart_files: number;
  /** Most fields of a form body. */
  max_form_fields: number;
  /** Deepest JSON nesting accepted (400 `nesting_too_deep`). */
  max_json_depth: number;
  /** Most attributes of one XML element (413 `too_many_xml_attributes`). */
  max_xml_attributes: number;
  /** Most entity and character references of one XML body (413 `too_many_xml_references`). */
  max_xml_references: number;
  /** Seconds a client's body may take to arrive when the gateway reads it (408). */
  body_timeout_secs?: number;
  /** Bytes of a body sent to several backends (tees) kept in memory; larger ones are spooled. */
  spool_threshold?: number;
}

/** Default `spool_threshold`: 1 MiB. */
export const DEFAULT_SPOOL_THRESHOLD = 1_048_576;

/** Defaults of `[proxy.content_limits]` (SPEC reference values). */
export const DEFAULT_CONTENT_LIMITS: ContentLimits = {
  max_body_size: 10_485_760,
  max_csv_rows: 10_000,
  max_csv_columns: 1_000,
  // Python's csv module refuses larger fields by default (csv.field_size_limit()).
  max_csv_cell_bytes: 131_072,
  max_xml_depth: 100,
  max_multipart_files: 10,
  max_form_fields: 1_000,
  max_json_depth: 128,
  max_xml_attributes: 256,
  max_xml_references: 100_000,
  body_timeout_secs: 60,
  spool_threshold: DEFAULT_SPOOL_THRESHOLD,
};

/** `[network.<name>.http3]`: an HTTP/3 (QUIC) listener serving the same endpoints. */
export interface Http3ListenerConfig {
  /** Address the listener binds. */
  bind: string;
  /** Port the listener binds. */
  port: number;
  /** PEM certificate chain. */
  cert_path: string;
  /** PEM private key of the certificate. */
  key_path: string;
}

/** `[network.<name>]`: one HTTP listener (HTTP/1.1, h2c, and HTTP/2 over TLS when a cert is set). */
export interface NetworkConfig {
  /** The slow-client guard (shared/net); default on. */
  connection_guard?: boolean;
  /** Seconds a client may take to send its request head. */
  header_timeout_secs?: number;
  /** Seconds an idle keep-alive connection stays open. */
  idle_timeout_secs?: number;
  /** Most open connections from one client address. */
  max_connections_per_ip?: number;
  /** The table's name. */
  name: string;
  /** Address the listener binds. */
  bind: string;
  /** Port the listener binds. */
  port: number;
  /** PEM certificate chain; with `tls_key_path` the listener speaks TLS with ALPN h2/http1.1. */
  tls_cert_path?: string;
  /** PEM private key of `tls_cert_path`. */
  tls_key_path?: string;
  /** An HTTP/3 listener serving the same endpoints. */
  http3?: Http3ListenerConfig;
}

/** `[endpoints.<name>]`. */
export interface EndpointConfig {
  /** The table's name. */
  name: string;
  /** The endpoint service type. */
  service: EndpointService;
  /** Service options with defaults applied (e.g. `path_prefix`, `local_aet`). */
  options: Record<string, unknown>;
  /** Names of the networks that serve this endpoint; empty means every network. */
  networks: string[];
}

/** `[targets.<name>]`. */
export interface TargetConfig {
  /** The table's name. */
  name: string;
  /** The target's URL (a base URL for http-like backends). */
  url: string;
}

/** Active health checks of a backend's targets (`[backends.<name>.health_check]`). */
export interface HealthCheckConfig {
  /** Path of the health check request. */
  path: string;
  /** Seconds between checks. */
  interval_secs: number;
  /** Seconds a check may take. */
  timeout_secs: number;
  /** Consecutive successful checks needed to bring a target back. */
  healthy_threshold: number;
}

/** `[backends.<name>.queue]`: durable delivery. */
export interface QueueConfig {
  /** `file` (default): files in `dir`; `nats`: a JetStream stream shared by a cluster. */
  store?: "file" | "nats";
  /** Directory of the messages (absolute once loaded from a file); default `queues/<backend>`. */
  dir?: string;
  /** `fifo` delivers one message at a time in order; `parallel` up to `concurrency`. */
  ordering: "fifo" | "parallel";
  /** Deliveries at once with `parallel` ordering. */
  concurrency: number;
  /** Most messages waiting; a full queue answers 503. */
  max_messages: number;
  /** Most bytes waiting; a full queue answers 503. */
  max_bytes: number;
  /** 0: no limit. */
  max_attempts: number;
  /** Seconds after which an undelivered message is dead-lettered. */
  max_age_secs: number;
  /** First retry delay, doubled after each failure. */
  initial_backoff_ms: number;
  /** Longest retry delay. */
  max_backoff_ms: number;
  /** Messages are synced to disk before the 202. */
  fsync: boolean;
  /** `fhir` backends: creates carry `If-None-Exist` from the resource's first identifier. */
  fhir_conditional_create: boolean;
  /** `nats` store: the server URLs (`nats://`, `tls://`). */
  nats_servers?: string[];
  /** `nats` store: the stream (default `GATEWAY_QUEUE_<BACKEND>`). */
  nats_stream?: string;
  /** `nats` store: the subject prefix (default `gateway.queue.<backend>`). */
  nats_subject?: string;
  /** `nats` store: replicas of each stream (default 1). */
  nats_replicas?: number;
  /** `nats` store: largest body kept inside a message; beyond, in the object store. */
  nats_max_payload?: number;
  /** `nats` store: seconds before a delivery its gateway stopped confirming goes to another. */
  nats_ack_wait_secs?: number;
  /** `nats` store: seconds allowed to connect and for each JetStream request. */
  nats_timeout_secs?: number;
  /** `nats` store: user name. */
  nats_user?: string;
  /** `nats` store: password (a secret). */
  nats_password?: string;
  /** `nats` store: token (a secret). */
  nats_token?: string;
  /** `nats` store: a `.creds` file. */
  nats_creds_file?: string;
  /** `nats` store: an NKey seed file. */
  nats_nkey_file?: string;
  /** `nats` store: PEM CA bundle. */
  nats_ca_path?: string;
  /** `nats` store: PEM client certificate. */
  nats_cert_path?: string;
  /** `nats` store: its private key. */
  nats_key_path?: string;
}

/** `[backends.<name>]`. */
export interface BackendConfig {
  /** The table's name. */
  name: string;
  /** A built-in service, or one an embedding program registered. */
  service: BackendService | CustomTypeName;
  /** Service options with defaults applied (e.g. `base_url`, `aet`, `root`). */
  options: Record<string, unknown>;
  /** Names of `[targets.*]`; for http-like backends each target URL is a base URL. */
  targets: string[];
  /** Tee backends only: when true, a failure of this backend fails the request. */
  required: boolean;
  /** Whole-call timeout in seconds (until the answer's last byte). */
  timeout_secs: number;
  /** Largest answer accepted, bytes; default `max_body_size` (not for echo and storage). */
  max_response_size?: number;
  /** Retries of idempotent requests after a connection error (not after a response). */
  retries: number;
  /** How a target is picked. */
  load_balancing: LoadBalancing;
  /** Passive health: this many consecutive failures take a target out for `cooldown_secs`. */
  max_failures: number;
  /** Seconds a failed target stays out of rotation. */
  cooldown_secs: number;
  /** Passive health may take out the last target in rotation; default false (it stays). */
  eject_last_target?: boolean;
  /** Active health checks of the targets. */
  health_check?: HealthCheckConfig;
  /** Durable delivery: requests are queued, answered 202 and delivered in the background. */
  queue?: QueueConfig;
  /**
   * Metadata routing: when set, the backend takes part only in requests whose metadata has every
   * listed key with the listed value. The first matching backend is the primary.
   */
  match?: Record<string, string>;
}

/** `[middleware.<name>]`. */
export interface MiddlewareConfig {
  /** The table's name. */
  name: string;
  /** The middleware type (built in, or registered by an embedding program). */
  type: string;
  /** Type options with defaults applied. */
  options: Record<string, unknown>;
}

/** `[pipelines.<name>]`. */
export interface PipelineConfig {
  /** The table's name. */
  name: string;
  /** Endpoints whose traffic enters this pipeline. */
  endpoints: string[];
  /** Applied in this order on requests and on responses. */
  middleware: string[];
  /** Backends called, the first one primary, the others tees. */
  backends: string[];
  /** `[pipelines.<name>.tracking]`: message tracking of this pipeline (docs/operations.md). */
  tracking?: PipelineTrackingConfig;
}

/** `[pipelines.<name>.tracking]`. */
export interface PipelineTrackingConfig {
  /** Record this pipeline's messages. */
  enabled: boolean;
  /** Stages whose content is kept (encrypted). */
  content: ("received" | "after_middleware" | "backend_request" | "backend_response")[];
  /** Bytes of each stage's body kept. */
  max_content_bytes: number;
}

/** `[tracking]`: the message tracking store. */
export interface TrackingConfig {
  /** Directory of the store (absolute once loaded from a file). */
  path: string;
  /** Records older than this are deleted. */
  max_age_hours: number;
  /** Largest size of the records; past it the oldest go. */
  max_bytes: number;
  /** Seconds between two retention passes. */
  retention_interval_secs: number;
  /** age identity file (absolute once loaded from a file). */
  identity_file?: string;
  /** Records waiting to be written, per isolate. */
  queue_size: number;
  /** Most records in one transaction. */
  batch_size: number;
  /** Milliseconds between two writes. */
  flush_interval_ms: number;
}

/** `[management.tokens.<name>]`: a management token with a role. */
export interface ManagementTokenConfig {
  /** The table's name. */
  name: string;
  /** What the token may do. */
  role: "viewer" | "operator" | "admin";
  /** The token (after `${VAR}` substitution). */
  token?: string;
  /** File holding the token. */
  token_file?: string;
}

/** `[management]`: the management API listener. */
export interface ManagementConfig {
  /** Whether the management API listens. */
  enabled: boolean;
  /** Address the management API binds. */
  bind: string;
  /** Port of the management API. */
  port: number;
  /** Path prefix of the management API. */
  prefix: string;
  /** File of the bearer token (resolved against the main config file's directory). */
  token_file?: string;
  /** Host names accepted in `Host` besides IP literals and `localhost`. */
  allowed_hosts?: string[];
  /** PEM certificate chain; with `tls_key_path` the listener speaks TLS. */
  tls_cert_path?: string;
  /** PEM private key of `tls_cert_path`. */
  tls_key_path?: string;
  /** `[management.tokens.<name>]`: further tokens with roles. */
  tokens?: Record<string, ManagementTokenConfig>;
  /** Serve the operations console (default true). */
  console?: boolean;
  /** Where browsers reach the console; reported to the cloud as a link. */
  console_url?: string;
}

/** `[logging]`. */
export interface LoggingConfig {
  /** The least severe level written. */
  level: LogLevel;
  /** `json` (one object per line) or `text`. */
  format: "json" | "text";
  /** Log request paths whole (ids included); default false. */
  log_identifiers?: boolean;
}

/** `[runtime]`. */
export interface RuntimeConfig {
  /** Seconds SIGTERM waits for in-flight work. */
  shutdown_grace_secs: number;
  /** Data-plane isolates (main thread included); absent: `GATEWAY_WORKERS`, else the CPU cores. */
  workers?: number;
  /**
   * Bytes of bodies each isolate may hold in memory to parse or transform them; absent: 1/8 of
   * the isolate's V8 heap limit.
   */
  max_buffered_bytes?: number;
  /** Watchdog: ms without a heartbeat answer before a worker is unresponsive (default 2000). */
  watchdog_miss_ms?: number;
  /** Watchdog: ms unresponsive before a worker is replaced; 0: never (default 10000). */
  watchdog_kill_ms?: number;
  /** Watchdog: ms the main thread may not answer before the process exits 70; 0: never. */
  watchdog_exit_ms?: number;
}

/** `[audit]`: the audit trail. */
export interface AuditConfig {
  /** JSON Lines file (absolute once loaded from a file). */
  file?: string;
  /** Size at which the file is rotated. */
  max_file_bytes: number;
  /** Rotated files kept; 0 keeps all. */
  keep_files: number;
  /** `sync`: answers wait for their record's group commit; `batched`: written in the background. */
  durability: "sync" | "batched";
  /** Milliseconds a sync-mode record waits for others to share its write and fdatasync. */
  group_commit_ms: number;
  /** Records buffered before writers wait. */
  queue_size: number;
  /** Milliseconds between flushes of buffered records (batched). */
  flush_interval_ms: number;
  /** Query parameters redacted besides the built-in ones. */
  redact_query: string[];
  /** Backend that receives FHIR AuditEvents. */
  fhir_backend?: string;
  /** AuditEvents sent in one FHIR batch. */
  fhir_batch_size: number;
  /** The observer named in AuditEvents; default: the host name. */
  source_name?: string;
  /** `[audit.syslog]`: RFC 5424 messages to a collector (RFC 5425 over TLS). */
  syslog?: AuditSyslogConfig;
}

/** `[audit.syslog]`: the syslog sink of the audit trail. */
export interface AuditSyslogConfig {
  /** The collector's host. */
  host: string;
  /** Its port (default by transport: 6514 tls, 514 tcp/udp). */
  port?: number;
  /** `tls` (RFC 5425), `tcp` (same framing, no TLS) or `udp` (RFC 5426). */
  transport: "tls" | "tcp" | "udp";
  /** PEM CA certificates of the collector (TLS). */
  ca_path?: string;
  /** PEM client certificate (mutual TLS). */
  cert_path?: string;
  /** PEM private key of `cert_path`. */
  key_path?: string;
  /** RFC 5424 APP-NAME. */
  app_name: string;
  /** Facility name (`authpriv`, `audit`, `local0`...). */
  facility: string;
  /** RFC 5424 HOSTNAME; default: `source_name`, else the host name. */
  hostname?: string;
  /** Records held while the collector is unreachable. */
  queue_size: number;
  /** Longest wait for a connection. */
  connect_timeout_ms: number;
}

/** `[cloud]`. */
export interface CloudConfig {
  /** Whether the gateway is authorized to and syncs with the cloud service. */
  enabled: boolean;
  /** Base URL of the cloud service (pinned issuer of machine tokens); required when enabled. */
  url?: string;
  /** Gateway code used to authorize; default: the host name. */
  gateway_code?: string;
  /** Directory of the cloud state (token, pulled configuration); absolute once loaded from a file. */
  state_dir?: string;
  /** Seconds between status reports to the cloud. */
  status_interval_secs?: number;
  /** Renew the machine token this many days before it expires (default: a third of its life). */
  renew_before_days?: number;
  /** Variables a configuration pushed from the cloud may reference. */
  allowed_env?: string[];
  /** The only directory a pushed configuration may name. */
  data_dir?: string;
}

/** `[dicom.peers.<AET>]`: a remote DICOM application entity (a C-MOVE destination). */
export interface DicomPeerConfig {
  /** The AE title (the table's name). */
  aet: string;
  /** Host name or address of the AE. */
  host: string;
  /** Port of the AE. */
  port: number;
  /** DICOM TLS to this AE, with these PEM files (absolute once loaded from a file). */
  use_tls?: boolean;
  /** PEM CA certificates the AE's certificate must chain to. */
  ca_cert_path?: string;
  /** PEM certificate chain. */
  cert_path?: string;
  /** PEM private key of the certificate. */
  key_path?: string;
}

/** `[dicom]`: settings shared by the DICOM endpoints and backends. */
export interface DicomConfig {
  /** Known remote AEs by AE title. */
  peers: Record<string, DicomPeerConfig>;
}

/** A whole, validated gateway configuration. */
export interface GatewayConfig {
  /** Directory of transform (JOLT) files. */
  transforms_path: string;
  /** Directory of further TOML files merged into this one. */
  pipelines_path?: string;
  /** The cloud integration. */
  cloud: CloudConfig;
  /** HTTP listeners by name. */
  network: Record<string, NetworkConfig>;
  /** Endpoints by name. */
  endpoints: Record<string, EndpointConfig>;
  /** Backends by name. */
  backends: Record<string, BackendConfig>;
  /** Upstream URLs by name. */
  targets: Record<string, TargetConfig>;
  /** Middleware by name. */
  middleware: Record<string, MiddlewareConfig>;
  /** Pipelines by name. */
  pipelines: Record<string, PipelineConfig>;
  /** Limits of the data plane. */
  proxy: { content_limits: ContentLimits };
  /** The management API. */
  management: ManagementConfig;
  /** `[tracking]`: the message tracking store (defaults apply when absent). */
  tracking?: TrackingConfig;
  /** Logging. */
  logging: LoggingConfig;
  /** How the process runs (always set by validation; optional for hand-made configs). */
  runtime?: RuntimeConfig;
  /** The audit trail; absent when the file has no `[audit]` table. */
  audit?: AuditConfig;
  /** DICOM (issue 4): known AEs; absent when the file has no `[dicom]` table. */
  dicom?: DicomConfig;
  /** `[alerts]`: rules and channels (docs/operations.md); absent when the file has none. */
  alerts?: AlertsConfig;
  /** Files this configuration was read from (main file first); empty for embedded text. */
  source_files: string[];
}

/** One problem found while loading or validating a configuration. */
export interface ConfigProblem {
  /** File the problem is in (or `<embedded>`). */
  file: string;
  /** 1-based line of the key, when known. */
  line?: number;
  /** Dotted key path, e.g. `backends.api.options.base_url`. */
  path: string;
  /** What is wrong. */
  message: string;
}

/** `[alerts.rules.<name>]` (docs/operations.md, "Alerts"). */
export interface AlertRuleConfig {
  /** The table's name. */
  name: string;
  /** What the rule watches. */
  kind:
    | "dead_letters"
    | "queue_age"
    | "error_rate"
    | "certificate_expiry"
    | "stuck_worker"
    | "component_degraded";
  /** Shown in every notice. */
  severity: "critical" | "warning" | "info";
  /** Names of `[alerts.channels.<name>]`. */
  channels: string[];
  /** At most one firing notice per channel in this many minutes. */
  min_interval_minutes: number;
  /** Reminders while firing, every this many minutes (0: none). */
  repeat_minutes: number;
  /** Send a resolved notice when the condition clears. */
  send_resolved: boolean;
  /** dead_letters, queue_age: the queued backends watched (absent: all). */
  backends?: string[];
  /** dead_letters: dead letters that fire. */
  threshold?: number;
  /** dead_letters: notify each new dead letter while firing. */
  notify_new?: boolean;
  /** queue_age: age of the oldest waiting message that fires. */
  max_age_minutes?: number;
  /** error_rate: the pipelines watched (absent: all). */
  pipelines?: string[];
  /** error_rate: the window; stuck_worker: how long a replacement keeps it firing. */
  window_minutes?: number;
  /** error_rate: 5xx / requests that fires. */
  max_ratio?: number;
  /** error_rate: requests the window needs. */
  min_requests?: number;
  /** certificate_expiry: days before expiry that fire. */
  days?: number;
  /** certificate_expiry: further certificate files. */
  paths?: string[];
  /** component_degraded: the components watched (absent: all). */
  components?: string[];
}

/** `[alerts.channels.<name>]`. */
export interface AlertChannelConfig {
  /** The table's name. */
  name: string;
  /** A webhook or SMTP e-mail. */
  type: "webhook" | "email";
  /** Time one delivery attempt may take. */
  timeout_secs: number;
  /** Further attempts after a failed one. */
  retries: number;
  /** webhook: where the JSON is posted (after `${VAR}` substitution). */
  url?: string;
  /** webhook: the body's shape. */
  format?: "slack" | "teams";
  /** webhook: headers of every notice. */
  headers?: Record<string, string>;
  /** email: the SMTP server. */
  host?: string;
  /** email: the SMTP port. */
  port?: number;
  /** email: STARTTLS (required), TLS from the first byte, or none. */
  security?: "starttls" | "tls" | "none";
  /** email: the SMTP user (after `${VAR}` substitution). */
  user?: string;
  /** email: the SMTP password (after `${VAR}` substitution). */
  password?: string;
  /** email: the sender address. */
  from?: string;
  /** email: the recipients. */
  to?: string[];
  /** email: put before every subject. */
  subject_prefix?: string;
  /** email: CA certificates of the SMTP server (absolute once loaded from a file). */
  ca_path?: string;
}

/** `[alerts]`. */
export interface AlertsConfig {
  /** Evaluate the rules and send notices. */
  enabled: boolean;
  /** Seconds between two evaluations. */
  evaluate_interval_secs: number;
  /** How notices name this gateway. */
  gateway_name?: string;
  /** Resolved alerts kept in memory. */
  history: number;
  /** Notices waiting per channel. */
  queue_size: number;
  /** The rules, by name. */
  rules: Record<string, AlertRuleConfig>;
  /** The channels, by name. */
  channels: Record<string, AlertChannelConfig>;
}
