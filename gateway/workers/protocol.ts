/**
 * Messages between the gateway's main thread and its data-plane workers. Everything here is
 * structured-cloneable: the validated configuration is plain data, shared memory travels as
 * SharedArrayBuffers, a queued request's body as a transferred ArrayBuffer.
 */
import type { ConfigProblem, GatewayConfig } from "../../shared/gateway_config/mod.ts";
import type { AuditEntry } from "../audit/mod.ts";
import type { DataPlaneDelta } from "../observability/mod.ts";
import type { PipelineError, RequestEvent } from "../pipeline/mod.ts";

/** A worker builds this configuration and starts its listeners, but does not serve it yet. */
export interface PrepareMessage {
  type: "prepare";
  generation: number;
  /**
   * This attempt's number, echoed by `prepared`: a refused reload leaves the generation number
   * unchanged, so a late answer to an earlier attempt must not be taken for the next one's.
   */
  attempt: number;
  config: GatewayConfig;
  /** Directory relative paths resolve against (the main config file's). */
  baseDir: string;
  /** The main thread's shared memory of this generation, by name (rate-limit buckets). */
  memory: Map<string, SharedArrayBuffer>;
  /** Query parameters audit records leave out, or null when the configuration keeps no trail. */
  auditRedacted: string[] | null;
  /** Send log lines to the main thread (its logger writes to a sink of its own) instead of stderr. */
  forwardLogs: boolean;
}

/** Main thread to worker. */
export type ToWorker =
  | PrepareMessage
  /** Serve the prepared generation from now on; retire the one before. */
  | { type: "commit"; generation: number }
  /** Drop the prepared generation and the listeners only it needed. */
  | { type: "abort"; generation: number }
  /** Send the metrics recorded since the last collect. */
  | { type: "collect"; id: number }
  /** The answer to an `enqueue`. */
  | QueueResult
  /** The audit records sent with `ack` are written and fdatasync'ed, or (`error`) were not kept. */
  | { type: "audit-committed"; ack: number; error?: string }
  /** Stop accepting, finish in-flight requests (up to `graceMs`), close, then say `drained`. */
  | { type: "drain"; graceMs: number }
  /** The watchdog's heartbeat: answered with `pong` at once, outside the ordered messages. */
  | { type: "ping"; seq: number }
  /** Someone watches the live tail (send finished requests as `feed`), or nobody does now. */
  | { type: "feed-watch"; on: boolean }
  /**
   * Test hook: block the event loop for `ms` or until `release[0]` is set. Honoured only when the
   * worker's process environment has `GATEWAY_TEST_HOOKS=1` (never set in production; no route
   * sends it).
   */
  | { type: "test-block"; ms: number; release: Int32Array };

/** The outcome of handing a request to a delivery queue of the main thread. */
export type QueueResult =
  | { type: "queued"; id: number; deliveryId: string }
  | {
    type: "queue-refused";
    id: number;
    status: number;
    code: string;
    message: string;
    /** Headers of the refusal (`Retry-After` of a full queue). */
    headers?: Record<string, string>;
  };

/** A request for a queued backend, as a worker hands it to the main thread's queue. */
export interface QueuedRequest {
  backend: string;
  requestId: string;
  protocol: "http" | "h3" | "dimse" | "mllp";
  method: string;
  path: string;
  /** The query string without `?`. */
  query: string;
  headers: [string, string][];
  metadata: Record<string, string>;
  endpoint: string;
  pipeline?: string;
  contentType: string | null;
  body: ArrayBuffer;
}

/** Worker to main thread. */
export type FromWorker =
  /** The worker's build and listeners for `generation`: ready when `problems` is empty. */
  | { type: "prepared"; generation: number; attempt: number; problems: ConfigProblem[] }
  | { type: "committed"; generation: number }
  /** Its metrics since the last collect, and the requests it has in flight now. */
  | {
    type: "metrics";
    id: number;
    delta: DataPlaneDelta;
    inFlight: number;
    /** Each pipeline's latest failure since the last collect (the console's dashboard). */
    lastErrors?: PipelineError[];
  }
  /** Requests this worker finished while someone watches the live tail. */
  | { type: "feed"; events: RequestEvent[] }
  /** The answer to `ping`, with the inodes of its listening sockets (empty: not known). */
  | { type: "pong"; seq: number; sockets: string[] }
  /**
   * Sent once at start: the worker's kernel thread id, for the main thread to see whether the
   * thread still runs after it was terminated (only where the C library is loaded).
   */
  | { type: "thread"; tid: number }
  /**
   * Audit records of requests this worker finished; with `ack` (`durability = "sync"`) their
   * answers wait for the main thread's `audit-committed` of the same `ack`.
   */
  | { type: "audit"; entries: AuditEntry[]; ack?: number }
  | { type: "enqueue"; id: number; request: QueuedRequest }
  /** A log line, when the main thread's logger has a sink of its own. */
  | { type: "log"; line: string }
  /**
   * A component of this isolate (its tracking writer) is degraded for `reason`, or without
   * `reason` works again (`quiet`: it simply went away). The main thread shows it as its own.
   */
  | HealthMessage
  /** The worker stopped; its last metrics come along. */
  | { type: "drained"; delta: DataPlaneDelta };

/** A worker's change of a component's state (remote_health.ts sends it). */
export interface HealthMessage {
  type: "health";
  component: string;
  reason?: string;
  quiet?: boolean;
}
