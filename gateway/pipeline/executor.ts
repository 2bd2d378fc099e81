/**
 * The pipeline executor: middleware in the listed order on the request, the backends (the first
 * matching one is the primary, the others are tee destinations), then the same middleware in the
 * same order on the response.
 */
import type { PipelineConfig } from "../../shared/gateway_config/mod.ts";
import type { Logger } from "../../shared/mod.ts";
import type { RequestEnvelope, ResponseEnvelope } from "../envelope.ts";
import { GatewayError, internalDetail } from "../errors.ts";
import type { Metrics } from "../observability/mod.ts";
import { removeSpool } from "../spool.ts";
import { addDeadline, type DeadlineEntry, removeDeadline, timeoutReason } from "./deadlines.ts";
import type { AuditSink } from "./front_door.ts";
import type {
  Backend,
  CallAbort,
  CallAbortListener,
  HookedCall,
  MessageCapture,
  MessageTracker,
  Middleware,
  UpstreamReader,
} from "./types.ts";

/** A pipeline with its middleware and backends built. */
export interface BuiltPipeline {
  readonly name: string;
  readonly config: PipelineConfig;
  readonly middleware: Middleware[];
  readonly backends: Backend[];
}

/** What the executor reports to. */
export interface ExecutorDeps {
  metrics: Metrics;
  logger: Logger;
  /** The audit trail, when the gateway keeps one (front_door.ts writes to it). */
  audit?: AuditSink;
  /** Message tracking (gateway/tracking), for the pipelines whose `tracking` is enabled. */
  tracking?: MessageTracker;
}

/** True when the backend takes part in a request with this metadata. */
function matches(backend: Backend, metadata: Record<string, string>): boolean {
  const match = backend.config.match;
  if (!match) return true;
  for (const key in match) if (metadata[key] !== match[key]) return false;
  return true;
}

/** Run one request through a pipeline. Errors are thrown as GatewayError for the endpoint to map. */
export function runPipeline(
  pipeline: BuiltPipeline,
  req: RequestEnvelope,
  deps: ExecutorDeps,
): Promise<ResponseEnvelope> {
  // A pipeline that does not track takes the plain path: no capture, no allocation.
  const tracking = pipeline.config.tracking;
  if (deps.tracking === undefined || tracking === undefined || !tracking.enabled) {
    return runStages(pipeline, req, deps, undefined);
  }
  return runTracked(pipeline, req, deps, deps.tracking.begin(pipeline.name, tracking));
}

/** runStages with a capture: the record is queued however the message ends. */
async function runTracked(
  pipeline: BuiltPipeline,
  req: RequestEnvelope,
  deps: ExecutorDeps,
  capture: MessageCapture,
): Promise<ResponseEnvelope> {
  try {
    const reading = capture.received(req);
    if (reading) await reading;
    const res = await runStages(pipeline, req, deps, capture);
    capture.finish(req, res.status);
    return res;
  } catch (err) {
    const g = err instanceof GatewayError ? err : undefined;
    capture.finish(req, g?.status ?? 500, g?.code ?? "internal_error");
    throw err;
  }
}

function runStages(
  pipeline: BuiltPipeline,
  req: RequestEnvelope,
  deps: ExecutorDeps,
  capture: MessageCapture | undefined,
): Promise<ResponseEnvelope> {
  req.pipeline = pipeline.name;
  // No middleware and no capture: straight to the backends, no frame of ours around them.
  if (pipeline.middleware.length === 0 && capture === undefined) {
    return callBackends(pipeline, req, deps, undefined);
  }
  return runMiddleware(pipeline, req, deps, capture);
}

/** The middleware on the request, the backends, the middleware on the response. */
async function runMiddleware(
  pipeline: BuiltPipeline,
  req: RequestEnvelope,
  deps: ExecutorDeps,
  capture: MessageCapture | undefined,
): Promise<ResponseEnvelope> {
  let response: ResponseEnvelope | undefined;
  // How many middleware saw the request; only those see the response.
  let seen = 0;
  for (const mw of pipeline.middleware) {
    seen++;
    if (!mw.acts.request || !mw.onRequest) continue;
    let early: ResponseEnvelope | void;
    try {
      const result = mw.readsUpstream
        ? mw.onRequest(req, upstreamReader(pipeline, deps))
        : mw.onRequest(req);
      early = result instanceof Promise ? await result : result;
    } catch (err) {
      throw middlewareError(mw, err);
    }
    if (early) {
      response = early;
      break;
    }
  }
  if (!response) {
    if (capture) await capture.afterMiddleware(req);
    response = await callBackends(pipeline, req, deps, capture);
  }
  for (let i = 0; i < seen; i++) {
    const mw = pipeline.middleware[i];
    if (!mw.acts.response || !mw.onResponse) continue;
    try {
      const result = mw.onResponse(response, req);
      if (result instanceof Promise) await result;
    } catch (err) {
      throw middlewareError(mw, err);
    }
  }
  return response;
}

/** Reads from the pipeline's primary backend for a middleware (UpstreamReader). */
function upstreamReader(pipeline: BuiltPipeline, deps: ExecutorDeps): UpstreamReader {
  return {
    read(sub: RequestEnvelope): Promise<ResponseEnvelope> {
      const backend = pipeline.backends.find((b) => matches(b, sub.metadata));
      if (!backend) {
        return Promise.reject(
          new GatewayError(
            502,
            "no_backend",
            `no backend of pipeline ${pipeline.name} matches the request metadata`,
          ),
        );
      }
      return callBackend(pipeline, backend, sub, deps);
    },
  };
}

/** What a middleware failure becomes: its own GatewayError, else a 500 naming the middleware. */
function middlewareError(mw: Middleware, err: unknown): GatewayError {
  if (err instanceof GatewayError) return err;
  return new GatewayError(
    500,
    "middleware_failed",
    `middleware ${mw.name} failed; the gateway log has the details under this request id`,
    undefined,
    internalDetail(err),
  );
}

function callBackends(
  pipeline: BuiltPipeline,
  req: RequestEnvelope,
  deps: ExecutorDeps,
  capture?: MessageCapture,
): Promise<ResponseEnvelope> {
  const backends = pipeline.backends;
  // The common case, one backend without a match table, allocates nothing here (not even a
  // frame: no async function between the pipeline and the backend's call).
  if (backends.length === 1 && !backends[0].config.match) {
    return callBackend(pipeline, backends[0], req, deps, capture);
  }
  return callSelected(pipeline, req, deps, capture);
}

/** The backends whose match table fits the request: the primary and its tee destinations. */
async function callSelected(
  pipeline: BuiltPipeline,
  req: RequestEnvelope,
  deps: ExecutorDeps,
  capture?: MessageCapture,
): Promise<ResponseEnvelope> {
  const backends = pipeline.backends;
  const selected = backends.filter((b) => matches(b, req.metadata));
  if (selected.length === 0) {
    throw new GatewayError(
      502,
      "no_backend",
      `no backend of pipeline ${pipeline.name} matches the request metadata`,
    );
  }
  const [primary, ...tees] = selected;
  if (tees.length === 0) return await callBackend(pipeline, primary, req, deps, capture);

  // Each destination reads the body: read it once, into memory or, past spool_threshold, into
  // a temporary file each of them streams from; the file goes when the last call is done.
  const spool = await req.body.makeReplayable();
  const teeCalls = tees.map((b) =>
    callBackend(pipeline, b, req, deps, capture).then(
      async (res) => {
        // The primary's response is the one returned: drop a tee's body unread.
        const body = res.body.forwardable();
        if (body instanceof ReadableStream) await body.cancel();
        if (res.status >= 500) {
          throw new GatewayError(
            502,
            "tee_backend_failed",
            `tee backend ${b.name} answered ${res.status}`,
          );
        }
        return res;
      },
    ).catch((err: unknown) => {
      deps.logger.warn("tee backend failed", {
        request_id: req.id,
        pipeline: pipeline.name,
        backend: b.name,
        error: (err as Error).message,
      });
      if (b.config.required) throw err;
    })
  );
  const required = tees.some((b) => b.config.required);
  const primaryCall = callBackend(pipeline, primary, req, deps, capture);
  if (spool !== null) {
    Promise.allSettled([primaryCall, ...teeCalls]).then(() => removeSpool(spool));
  }
  if (required) {
    // A required tee decides the outcome: wait for all, fail if any required one failed.
    const [res] = await Promise.all([primaryCall, ...teeCalls]);
    return res;
  }
  return await primaryCall;
}

function callBackend(
  pipeline: BuiltPipeline,
  backend: Backend,
  req: RequestEnvelope,
  deps: ExecutorDeps,
  capture?: MessageCapture,
): Promise<ResponseEnvelope> {
  if (capture) return callCaptured(pipeline, backend, req, deps, capture);
  // Without a capture nothing waits between the backend's answer and ours: then() instead of
  // an async frame.
  const start = performance.now();
  // The call object is what the backend gets: its signal is built on first use.
  const call = new CallSignal(req, backend.config.timeout_secs * 1000, deps.logger);
  let invoked: Promise<ResponseEnvelope>;
  try {
    invoked = backend.invoke(req, call);
  } catch (err) {
    return Promise.reject(callFailed(pipeline, backend, deps, call, start, err));
  }
  return invoked.then(
    (res) => {
      let refused: Promise<never> | undefined;
      try {
        refused = checkAnswer(backend, req, res);
      } catch (err) {
        throw callFailed(pipeline, backend, deps, call, start, err);
      }
      if (refused) {
        return refused.catch((err) => {
          throw callFailed(pipeline, backend, deps, call, start, err);
        });
      }
      callAnswered(pipeline, backend, deps, call, start, res);
      return res;
    },
    (err) => {
      throw callFailed(pipeline, backend, deps, call, start, err);
    },
  );
}

/**
 * Counts an answer on the request's memory lease and bounds a remote one: a promise that rejects
 * (after cancelling the body) when its length is over the limit, else undefined.
 */
function checkAnswer(
  backend: Backend,
  req: RequestEnvelope,
  res: ResponseEnvelope,
): Promise<never> | undefined {
  // An answer a middleware reads whole counts on the request's memory budget lease.
  // Counted, never refused: the backend has acted, and a 503 now would invite a retry of it.
  res.body.chargeTo(req.memory, false);
  // A remote answer over the limit is refused when its length says so, else cut where it
  // passes. Echo and storage answers are local (a stored object may be large by design).
  const service = backend.config.service;
  if (service === "echo" || service === "storage") return undefined;
  const limit = backend.config.max_response_size ?? req.body.limits.max_body_size;
  const length = res.body.knownLength;
  if (length !== null && length > limit) {
    return cancelBody(res.body).then(() => {
      throw new GatewayError(
        502,
        "upstream_response_too_large",
        `backend ${backend.name} answered ${length} bytes, over its limit of ${limit} bytes ` +
          "(max_response_size, else max_body_size)",
      );
    });
  }
  res.body.limitAsUpstream(backend.name, limit);
  return undefined;
}

/**
 * The call answered: counted. The timeout bounds the whole exchange: while the answer's body is
 * still streaming, the deadline stays armed and cuts it (the client then sees the connection end
 * mid-body). Aborting a finished exchange does nothing, so the deadline simply expires.
 */
function callAnswered(
  pipeline: BuiltPipeline,
  backend: Backend,
  deps: ExecutorDeps,
  call: CallSignal,
  start: number,
  res: ResponseEnvelope,
): void {
  const streaming = !res.body.isEmpty && res.body.knownLength !== 0 && res.body.streaming;
  deps.metrics.backendCall(pipeline.name, backend.name, "ok", (performance.now() - start) / 1000);
  if (!streaming) call.done();
}

/** The call failed: counted by its code, the clock stopped; returns `err` to throw. */
function callFailed(
  pipeline: BuiltPipeline,
  backend: Backend,
  deps: ExecutorDeps,
  call: CallSignal,
  start: number,
  err: unknown,
): unknown {
  const code = err instanceof GatewayError ? err.code : "internal_error";
  deps.metrics.backendCall(pipeline.name, backend.name, code, (performance.now() - start) / 1000);
  call.done();
  return err;
}

/** callBackend with a capture: it records the request, the answer read whole, and the call. */
async function callCaptured(
  pipeline: BuiltPipeline,
  backend: Backend,
  req: RequestEnvelope,
  deps: ExecutorDeps,
  capture: MessageCapture,
): Promise<ResponseEnvelope> {
  await capture.backendRequest(backend.name, req);
  const start = performance.now();
  const call = new CallSignal(req, backend.config.timeout_secs * 1000, deps.logger);
  let streaming = false;
  try {
    const res = await backend.invoke(req, call);
    const refused = checkAnswer(backend, req, res);
    if (refused) await refused;
    // The answer is read whole while the deadline is still armed.
    await capture.backendResponse(backend.name, res);
    capture.backendCall(backend.name, res.status, "ok", (performance.now() - start) / 1000, res);
    streaming = !res.body.isEmpty && res.body.knownLength !== 0 && res.body.streaming;
    deps.metrics.backendCall(pipeline.name, backend.name, "ok", (performance.now() - start) / 1000);
    return res;
  } catch (err) {
    const code = err instanceof GatewayError ? err.code : "internal_error";
    deps.metrics.backendCall(pipeline.name, backend.name, code, (performance.now() - start) / 1000);
    capture.backendCall(backend.name, null, code, (performance.now() - start) / 1000);
    throw err;
  } finally {
    if (!streaming) call.done();
  }
}

/** Cancels a body's stream if it has one (an answer that is refused). */
async function cancelBody(body: ResponseEnvelope["body"]): Promise<void> {
  const source = body.forwardable();
  if (source instanceof ReadableStream) await source.cancel().catch(() => {});
}

/**
 * How long a backend call runs before the client's disconnect is linked to it. Reading a
 * request's `signal` costs the runtime an object graph and a pending operation (about 1.3 KB per
 * request); a call that answers sooner never pays for it, and a client that leaves a longer call
 * stops it within this delay plus one tick.
 */
const CLIENT_LINK_MS = 100;

/**
 * The abort of one backend call: the client's disconnect or the backend timeout. It is its own
 * abort hook (`hook`, which our HTTP/1.1 client takes as its signal: a listener slot instead of
 * an AbortController and an event listener per request); an `AbortSignal` is built only for a
 * backend that reads `signal`. Armed on first use and registered with the coarse deadline clock,
 * which links it to the client's disconnect once the call has lasted CLIENT_LINK_MS
 * (AbortSignal.any and AbortSignal.timeout would leave weak references and a timer per request
 * alive long after it).
 */
class CallSignal implements DeadlineEntry, HookedCall, CallAbort {
  readonly #req: RequestEnvelope;
  readonly #timeoutMs: number;
  readonly logger: Logger;
  deadline = 0;
  armAt = Infinity;
  aborted = false;
  reason: unknown = undefined;
  #armed = false;
  #controller: AbortController | undefined;
  /** The usual single listener (the exchange), then any more. */
  #listener: CallAbortListener | null = null;
  #more: CallAbortListener[] | null = null;
  /** Listening to the client's signal (after CLIENT_LINK_MS). */
  #linked = false;

  constructor(req: RequestEnvelope, timeoutMs: number, logger: Logger) {
    this.#req = req;
    this.#timeoutMs = timeoutMs;
    this.logger = logger;
  }

  get hook(): CallAbort {
    this.#arm();
    return this;
  }

  get signal(): AbortSignal {
    let controller = this.#controller;
    if (controller !== undefined) return controller.signal;
    this.#controller = controller = new AbortController();
    this.#arm();
    if (this.aborted) controller.abort(this.reason);
    return controller.signal;
  }

  addEventListener(_type: "abort", listener: CallAbortListener): void {
    this.#arm();
    if (this.#listener === null) this.#listener = listener;
    else (this.#more ??= []).push(listener);
  }

  removeEventListener(_type: "abort", listener: CallAbortListener): void {
    if (this.#listener === listener) this.#listener = null;
    else if (this.#more !== null) {
      const index = this.#more.indexOf(listener);
      if (index !== -1) this.#more.splice(index, 1);
    }
  }

  /** Starts the clock: the timeout and the client link. */
  #arm(): void {
    if (this.#armed) return;
    this.#armed = true;
    const now = performance.now();
    this.deadline = now + this.#timeoutMs;
    this.armAt = now + CLIENT_LINK_MS;
    addDeadline(this);
  }

  /** Aborts once: the listeners run, the signal (if built) aborts. */
  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.done();
    this.#controller?.abort(reason);
    const listener = this.#listener;
    this.#listener = null;
    listener?.handleEvent();
    const more = this.#more;
    this.#more = null;
    if (more !== null) { for (const other of more) other.handleEvent(); }
  }

  /** The deadline passed. */
  expire(): void {
    this.abort(timeoutReason());
  }

  /** The call has lasted: from now on the client going away aborts it. */
  onArm(): void {
    const client = this.#req.signal;
    if (client.aborted) {
      this.abort(client.reason);
    } else {
      this.#linked = true;
      // The call is the client signal's listener too (handleEvent): no closure.
      client.addEventListener("abort", this, { once: true });
    }
  }

  /** The client's signal aborted. */
  handleEvent(): void {
    this.#linked = false;
    this.abort(this.#req.signal.reason);
  }

  /** The backend answered (or failed): stop the clock, unlink from the client. */
  done(): void {
    removeDeadline(this);
    if (this.#linked) {
      this.#linked = false;
      this.#req.signal.removeEventListener("abort", this);
    }
  }
}
