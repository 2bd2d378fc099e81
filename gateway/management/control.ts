/** What the management API needs from the running gateway (implemented by gateway/runtime). */
import type { DeliveryQueues } from "../delivery/mod.ts";
import type { ConfigProblem, GatewayConfig } from "../../shared/gateway_config/mod.ts";
import type { DegradedComponent, Metrics } from "../observability/mod.ts";
import type { CloudControl } from "../cloud_client/mod.ts";
import type { AlertsView } from "../alerts/mod.ts";
import type { TrackingControl } from "../tracking/mod.ts";

/** One route of the data plane. */
export interface RouteInfo {
  /** Path prefix the route serves (e.g. `/fhir`), or `dimse://host:port` for DIMSE listeners. */
  path: string;
  /** HTTP methods served (`*` for any); for a DIMSE listener its enabled operations (`C-ECHO`...). */
  methods: string[];
  endpoint: string;
  service: string;
  pipeline: string;
  /** Networks (listeners) the route is served on; none for a DIMSE listener (its own socket). */
  networks: string[];
  /** The DIMSE listener of a `dicom_scp` endpoint; absent for HTTP routes. */
  dimse?: DimseListenerInfo;
  /** The MLLP listener of an `hl7` endpoint; absent for other routes. */
  mllp?: MllpListenerInfo;
  /**
   * Which data-plane isolates serve the route: `all_workers` (each HTTP listener runs in every
   * worker, on the same port) or `main_thread` (a DIMSE listener: one socket per port).
   */
  served_by?: "all_workers" | "main_thread";
  /** How many isolates serve it (`[runtime] workers` for HTTP routes, 1 for DIMSE). */
  workers?: number;
  /** Networks whose HTTP/3 (QUIC) listener also serves the route: in the main thread only. */
  http3_networks?: string[];
}

/** One data-plane isolate, as `GET /{prefix}/workers` lists it. */
export interface WorkerStatus {
  /** 0 is the main thread, then the worker threads. */
  index: number;
  /** The configuration generation it serves. */
  generation: number;
  /** Requests it finished. */
  requests: number;
  /**
   * `serving`; `starting` (a new or replacement worker not serving yet); `unresponsive` (its
   * event loop has not answered the watchdog for `[runtime] watchdog_miss_ms`).
   */
  state?: "starting" | "serving" | "unresponsive";
  /** False while it is unresponsive. */
  healthy?: boolean;
  /** Milliseconds since it last answered the watchdog (null before its first answer). */
  heartbeat_age_ms?: number | null;
  /** Times a worker in this place was replaced (it failed, or was unresponsive too long). */
  replacements?: number;
  /**
   * Threads of workers the watchdog terminated in this place that still run (Deno cannot stop
   * synchronous JavaScript); present only while there are some.
   */
  lingering_threads?: { thread_id: number; terminated_ms: number }[];
}

/** An isolate that keeps the gateway from being ready (`/readyz` answers 503 while it lasts). */
export interface UnresponsiveIsolate {
  index: number;
  /** Milliseconds since it last answered the watchdog. */
  silent_ms: number;
  reason: string;
}

/** The listener and association policy of a `dicom_scp` endpoint. */
export interface DimseListenerInfo {
  bind: string;
  port: number;
  /** Called AE title the listener answers to. */
  local_aet: string;
  /** Enabled DIMSE services: `echo`, `find`, `get`, `move`, `store`. */
  services: string[];
  /** Calling AE titles accepted, or null for any. */
  allowed_calling_aets: string[] | null;
  /** Where received instances are written, or null. */
  storage_dir: string | null;
}

/** The listener and policy of an `hl7` endpoint. */
export interface MllpListenerInfo {
  bind: string;
  port: number;
  /** MLLP over TLS. */
  tls: boolean;
  /** Senders must present a certificate of the configured CAs. */
  client_certificates: boolean;
  /** `message`, `original` or `enhanced`. */
  ack_mode: string;
  max_message_bytes: number;
  idle_timeout_secs: number;
  max_connections: number;
  /** MSH-4 values accepted, or null for any. */
  allowed_sending_facilities: string[] | null;
}

/** One pipeline as the management API reports it. */
export interface PipelineInfo {
  name: string;
  endpoints: string[];
  middleware: { name: string; type: string }[];
  backends: {
    name: string;
    service: string;
    targets: { name: string; url: string; healthy: boolean }[];
  }[];
}

/** The outcome of a reload. */
export interface ReloadOutcome {
  ok: boolean;
  /** Config generation now running (increments on every successful reload). */
  generation: number;
  duration_ms: number;
  /** Every problem found, when `ok` is false. */
  errors?: ConfigProblem[];
}

/** The running gateway as seen by the management API. */
export interface GatewayControl {
  readonly version: string;
  readonly startedAt: Date;
  /** Path of the main config file, or null when running on the embedded default. */
  readonly configFile: string | null;
  /** The config currently serving traffic. */
  config(): GatewayConfig;
  /**
   * Generation of the config serving traffic (1 = loaded at start, +1 per successful reload).
   * Optional until the runtime implements it; `info` reports null without it.
   */
  generation?(): number;
  routes(): RouteInfo[];
  pipelines(): PipelineInfo[];
  /** Re-read, validate and swap the configuration; never throws. */
  reload(trigger: "api" | "watch" | "signal" | "cloud"): Promise<ReloadOutcome>;
  /** True once listeners are up and not draining. */
  ready(): boolean;
  /** Components degraded (not down) now, such as a queue paused by its disk; `/readyz` lists them. */
  degraded?(): DegradedComponent[];
  readonly metrics: Metrics;
  /** The data-plane isolates (`GET /{prefix}/workers`); absent: this thread only. */
  workers?(): WorkerStatus[];
  /** Isolates frozen now (the watchdog's view): `/readyz` fails while there is one. */
  unresponsiveWorkers?(): UnresponsiveIsolate[];
  /** Brings the data-plane workers' figures into `metrics` (before `/metrics` renders them). */
  collectMetrics?(): Promise<void>;
  /** The cloud operations (`token`, `authorize`, `update`) and the `cloud` part of `info`. */
  readonly cloud?: CloudControl;
  /** The delivery queues (`[backends.<name>.queue]`). */
  readonly queues?: DeliveryQueues;
  /** Alerts firing and recently resolved, and the channels' figures (gateway/alerts). */
  alerts?(): AlertsView;
  /** Message tracking: search, view, replay, resend (gateway/tracking). */
  readonly tracking?: TrackingControl;
}
