/** Contracts between the pipeline executor, middleware and backends. */
import type {
  BackendConfig,
  GatewayConfig,
  MiddlewareConfig,
  PipelineTrackingConfig,
} from "../../shared/gateway_config/mod.ts";
import type { Logger } from "../../shared/mod.ts";
import type { RequestEnvelope, ResponseEnvelope } from "../envelope.ts";
import type {
  AssociationMetrics,
  ComponentHealth,
  PasswordMetrics,
  RateLimitMetrics,
} from "../observability/mod.ts";

/**
 * A place transform specs are read from, by their `spec_path` (files under `transforms_path`, or
 * the cloud's copies): what a build gives the middleware that load specs.
 */
export interface TransformSource {
  /** Absolute file of a spec (for watching and messages). */
  resolve(specPath: string): string;
  /** The spec's JSON text. */
  read(specPath: string): Promise<string>;
}

/** The metrics a middleware or backend counts in itself. */
export interface BuildMetrics {
  /** DIMSE associations a backend keeps (a dicom_scu's pool). */
  readonly associations: AssociationMetrics;
  /** Rate-limit store failures (the rate_limit middleware). */
  readonly rateLimits: RateLimitMetrics;
  /** Passwords hashed (the basic_auth middleware). */
  readonly passwords: PasswordMetrics;
}

/** What a middleware or backend factory may use while it builds. */
export interface BuildContext {
  /** The whole configuration the middleware or backend belongs to. */
  config: GatewayConfig;
  /** The gateway's logger. */
  logger: Logger;
  /** Directory of the main config file; relative paths in options resolve against it. */
  baseDir: string;
  /** True for `--validate-config`: build and check, but start no timers, watchers or sockets. */
  validateOnly?: boolean;
  /** Where transform specs come from; default: files under `transforms_path`. */
  transformSource?: TransformSource;
  /**
   * Memory shared by every data-plane worker of the gateway under `name` (`bytes` long, zeroed
   * when first made): state that must be one across workers, such as rate-limit buckets. Each
   * configuration generation gets fresh memory. Absent outside the gateway (tests, tools).
   */
  sharedMemory?: (name: string, bytes: number) => SharedArrayBuffer;
  /** The gateway's metrics a component counts in itself (the gateway's `Metrics` has them). */
  metrics?: BuildMetrics;
  /**
   * The gateway's degraded components (main thread only): a component that depends on an outside
   * service (a rate limit's Redis) reports there. Absent in workers and outside the gateway.
   */
  health?: ComponentHealth;
  /** True in a data-plane worker (its main thread reports shared state such as `health`). */
  dataPlaneWorker?: boolean;
}

/** What the executor offers a middleware that must ask the pipeline's backend first. */
export interface UpstreamReader {
  /**
   * Sends `req` (a request the middleware made, such as a read of the resource a write would
   * replace) to the pipeline's primary backend for the request's metadata: no tee, no
   * middleware. The caller reads or cancels the answer's body.
   */
  read(req: RequestEnvelope): Promise<ResponseEnvelope>;
}

/** A processing step of a pipeline, applied in the listed order on requests and on responses. */
export interface Middleware {
  /** The `[middleware.<name>]` name. */
  readonly name: string;
  /** Which directions the middleware acts on. */
  readonly acts: { request: boolean; response: boolean };
  /** True when onRequest needs an {@link UpstreamReader} (its second argument). */
  readonly readsUpstream?: boolean;
  /**
   * Act on a request. Returning a ResponseEnvelope ends the request there (no backend is called)
   * and the response still runs through the middleware on its way back. Work that needs no I/O
   * may finish without a promise, which spares the request a turn of the event loop.
   */
  onRequest?(
    req: RequestEnvelope,
    upstream?: UpstreamReader,
  ): Promise<ResponseEnvelope | void> | ResponseEnvelope | void;
  /** Act on a response, with the request it answers (a promise only when it waits for I/O). */
  onResponse?(res: ResponseEnvelope, req: RequestEnvelope): Promise<void> | void;
  /** Release resources (file watchers) when the config that built it is retired. */
  close?(): void | Promise<void>;
}

/** Builds a middleware of one `type` from its config. Throws with a clear message when invalid. */
export type MiddlewareFactory = (
  config: MiddlewareConfig,
  ctx: BuildContext,
) => Middleware | Promise<Middleware>;

/** Per-call context a backend receives from the executor. */
export interface BackendCall {
  /**
   * Aborted on client disconnect or backend timeout. Backends that do I/O must pass it on; the
   * timeout timer starts on first access, so a backend that does no I/O costs no timer.
   */
  readonly signal: AbortSignal;
  /** The gateway's logger, with the request's context. */
  logger: Logger;
}

/**
 * The executor's backend call: besides `signal`, the same abort without an `AbortSignal` (whose
 * controller and listener cost about 0.6 KB per request), which our HTTP/1.1 client takes as
 * its signal. Reading `hook` starts the timeout like `signal`. Calls made outside the executor
 * have no hook: {@link callAbortOf} gives their `signal` then.
 */
export interface HookedCall extends BackendCall {
  readonly hook: CallAbort;
}

/** The cheapest abort of `call`: the executor's hook, else its signal. */
export function callAbortOf(call: BackendCall): CallAbort {
  return "hook" in call ? (call as HookedCall).hook : call.signal;
}

/** What listens to a {@link CallAbort}: called once, on abort. */
export interface CallAbortListener {
  handleEvent(): void;
}

/** The abort of a backend call, in the shape of the part of `AbortSignal` a client needs. */
export interface CallAbort {
  readonly aborted: boolean;
  readonly reason: unknown;
  addEventListener(type: "abort", listener: CallAbortListener): void;
  removeEventListener(type: "abort", listener: CallAbortListener): void;
}

/** An egress definition turned into something callable. */
export interface Backend {
  /** The `[backends.<name>]` name. */
  readonly name: string;
  /** Its validated configuration (options with defaults applied). */
  readonly config: BackendConfig;
  /**
   * Call the backend. Throw a GatewayError (502 backend_unavailable, 504 backend_timeout, ...)
   * when it cannot answer; an HTTP error status from upstream is a normal response.
   */
  invoke(req: RequestEnvelope, call: BackendCall): Promise<ResponseEnvelope>;
  /**
   * True when nothing of the backend reads the request's body bytes once `invoke` has returned
   * (or thrown): the caller may then reuse their memory (a delivery queue reads the next message
   * into it). Unset: the bytes may still be read.
   */
  readonly releasesBody?: boolean;
  /** Stop health checks, close pools. */
  close(): void | Promise<void>;
}

/** Builds a backend of one service type from its config. */
export type BackendFactory = (
  config: BackendConfig,
  ctx: BuildContext,
) => Backend | Promise<Backend>;

/**
 * Message tracking's view of one message (gateway/tracking): made only for a pipeline whose
 * `[pipelines.<name>.tracking]` is enabled, so a pipeline that does not track pays nothing.
 * The content methods read bodies whole only for the stages the pipeline keeps.
 */
export interface MessageCapture {
  /** The request as it arrived; a promise only when it reads something (content, HL7 text). */
  received(req: RequestEnvelope): Promise<void> | undefined;
  afterMiddleware(req: RequestEnvelope): Promise<void>;
  backendRequest(backend: string, req: RequestEnvelope): Promise<void>;
  backendResponse(backend: string, res: ResponseEnvelope): Promise<void>;
  /** A backend call ended; `res` is its answer (absent when it gave none). */
  backendCall(
    name: string,
    status: number | null,
    outcome: string,
    seconds: number,
    res?: ResponseEnvelope,
  ): void;
  /** Queues the record; never throws, never waits. */
  finish(req: RequestEnvelope, status: number, errorCode?: string): void;
}

/** Where the executor starts a message's capture. */
export interface MessageTracker {
  begin(pipeline: string, config: PipelineTrackingConfig): MessageCapture;
}
