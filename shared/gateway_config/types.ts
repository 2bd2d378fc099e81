/**
 * The validated, defaults-applied shape of a gateway configuration.
 *
 * The loader (`parse.ts`/`validate.ts`) turns TOML text into this shape; the cloud service builds it
 * and writes it back to TOML with `writer.ts`. Names of keys follow the TOML file (snake_case).
 */

/** Endpoint service types (ingress). */
export const ENDPOINT_SERVICES = ["http", "fhir", "jmix", "dicomweb", "dicom_scp"] as const;
/** Backend service types (egress). */
export const BACKEND_SERVICES = [
  "http",
  "fhir",
  "dicomweb",
  "http3",
  "dicom_scu",
  "storage",
  "echo",
] as const;
/** An endpoint service type. */
export type EndpointService = typeof ENDPOINT_SERVICES[number];
/** A backend service type. */
export type BackendService = typeof BACKEND_SERVICES[number];
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
  max_body_size: number;
  max_csv_rows: number;
  max_xml_depth: number;
  max_multipart_files: number;
  max_form_fields: number;
  /** Deepest JSON nesting accepted (400 `nesting_too_deep`). */
  max_json_depth: number;
  /** Most attributes of one XML element (413 `too_many_xml_attributes`). */
  max_xml_attributes: number;
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
  max_xml_depth: 100,
  max_multipart_files: 10,
  max_form_fields: 1_000,
  max_json_depth: 128,
  max_xml_attributes: 256,
  body_timeout_secs: 60,
  spool_threshold: DEFAULT_SPOOL_THRESHOLD,
};

/** `[network.<name>.http3]`: an HTTP/3 (QUIC) listener serving the same endpoints. */
export interface Http3ListenerConfig {
  bind: string;
  port: number;
  cert_path: string;
  key_path: string;
}

/** `[network.<name>]`: one HTTP listener (HTTP/1.1, h2c, and HTTP/2 over TLS when a cert is set). */
export interface NetworkConfig {
  /** The slow-client guard (shared/net); default on. */
  connection_guard?: boolean;
  header_timeout_secs?: number;
  idle_timeout_secs?: number;
  max_connections_per_ip?: number;
  name: string;
  bind: string;
  port: number;
  /** PEM certificate chain; with `tls_key_path` the listener speaks TLS with ALPN h2/http1.1. */
  tls_cert_path?: string;
  tls_key_path?: string;
  http3?: Http3ListenerConfig;
}

/** `[endpoints.<name>]`. */
export interface EndpointConfig {
  name: string;
  service: EndpointService;
  /** Service options with defaults applied (e.g. `path_prefix`, `local_aet`). */
  options: Record<string, unknown>;
  /** Names of the networks that serve this endpoint; empty means every network. */
  networks: string[];
}

/** `[targets.<name>]`. */
export interface TargetConfig {
  name: string;
  url: string;
}

/** Active health checks of a backend's targets (`[backends.<name>.health_check]`). */
export interface HealthCheckConfig {
  path: string;
  interval_secs: number;
  timeout_secs: number;
  /** Consecutive successful checks needed to bring a target back. */
  healthy_threshold: number;
}

/** `[backends.<name>.queue]`: durable delivery. */
export interface QueueConfig {
  /** Directory of the messages (absolute once loaded from a file); default `queues/<backend>`. */
  dir?: string;
  ordering: "fifo" | "parallel";
  concurrency: number;
  max_messages: number;
  max_bytes: number;
  /** 0: no limit. */
  max_attempts: number;
  max_age_secs: number;
  initial_backoff_ms: number;
  max_backoff_ms: number;
  fsync: boolean;
  /** `fhir` backends: creates carry `If-None-Exist` from the resource's first identifier. */
  fhir_conditional_create: boolean;
}

/** `[backends.<name>]`. */
export interface BackendConfig {
  name: string;
  service: BackendService;
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
  load_balancing: LoadBalancing;
  /** Passive health: this many consecutive failures take a target out for `cooldown_secs`. */
  max_failures: number;
  cooldown_secs: number;
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
  name: string;
  type: string;
  options: Record<string, unknown>;
}

/** `[pipelines.<name>]`. */
export interface PipelineConfig {
  name: string;
  endpoints: string[];
  /** Applied in this order on requests and on responses. */
  middleware: string[];
  backends: string[];
}

/** `[management]`: the management API listener. */
export interface ManagementConfig {
  enabled: boolean;
  bind: string;
  port: number;
  prefix: string;
  /** File of the bearer token (resolved against the main config file's directory). */
  token_file?: string;
  /** Host names accepted in `Host` besides IP literals and `localhost`. */
  allowed_hosts?: string[];
  tls_cert_path?: string;
  tls_key_path?: string;
}

/** `[logging]`. */
export interface LoggingConfig {
  level: LogLevel;
  format: "json" | "text";
  /** Log request paths whole (ids included); default false. */
  log_identifiers?: boolean;
}

/** `[runtime]`. */
export interface RuntimeConfig {
  /** Seconds SIGTERM waits for in-flight work. */
  shutdown_grace_secs: number;
}

/** `[audit]`: the audit trail. */
export interface AuditConfig {
  /** JSON Lines file (absolute once loaded from a file). */
  file?: string;
  max_file_bytes: number;
  /** Rotated files kept; 0 keeps all. */
  keep_files: number;
  queue_size: number;
  flush_interval_ms: number;
  /** Query parameters redacted besides the built-in ones. */
  redact_query: string[];
  /** Backend that receives FHIR AuditEvents. */
  fhir_backend?: string;
  fhir_batch_size: number;
  /** The observer named in AuditEvents; default: the host name. */
  source_name?: string;
}

/** `[cloud]`. */
export interface CloudConfig {
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
  host: string;
  port: number;
  /** DICOM TLS to this AE, with these PEM files (absolute once loaded from a file). */
  use_tls?: boolean;
  ca_cert_path?: string;
  cert_path?: string;
  key_path?: string;
}

/** `[dicom]`: settings shared by the DICOM endpoints and backends. */
export interface DicomConfig {
  /** Known remote AEs by AE title. */
  peers: Record<string, DicomPeerConfig>;
}

/** A whole, validated gateway configuration. */
export interface GatewayConfig {
  transforms_path: string;
  pipelines_path?: string;
  cloud: CloudConfig;
  network: Record<string, NetworkConfig>;
  endpoints: Record<string, EndpointConfig>;
  backends: Record<string, BackendConfig>;
  targets: Record<string, TargetConfig>;
  middleware: Record<string, MiddlewareConfig>;
  pipelines: Record<string, PipelineConfig>;
  proxy: { content_limits: ContentLimits };
  management: ManagementConfig;
  logging: LoggingConfig;
  /** How the process runs (always set by validation; optional for hand-made configs). */
  runtime?: RuntimeConfig;
  /** The audit trail; absent when the file has no `[audit]` table. */
  audit?: AuditConfig;
  /** DICOM (issue 4): known AEs; absent when the file has no `[dicom]` table. */
  dicom?: DicomConfig;
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
  message: string;
}
