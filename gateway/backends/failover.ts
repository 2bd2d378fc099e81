/**
 * The attempt loop shared by the HTTP-family backends: pick a healthy target, send, and on a
 * failure decide between 504 (timeout), 499 (client gone), a retry on another target, or 502.
 */
import type { Logger } from "../../shared/mod.ts";
import type { BodySource, RequestEnvelope } from "../envelope.ts";
import { clientBodyBroke, GatewayError } from "../errors.ts";
import type { Target, TargetPool } from "../pipeline/mod.ts";

/** Methods that may be sent twice (RFC 9110 §9.2.2). */
export const IDEMPOTENT = new Set(["GET", "HEAD", "OPTIONS", "PUT", "DELETE", "TRACE"]);

/** Whether and why the call was aborted: an `AbortSignal`, or the executor's lighter call abort. */
export interface AbortState {
  readonly aborted: boolean;
  readonly reason: unknown;
}

/**
 * What one backend call needs from its backend. `send` answers `R`, which `answer` turns into
 * the call's `T` (without it, `R` is `T`): a conversion done in the loop's own callback rather
 * than a `then` of the backend's per attempt.
 */
export interface FailoverOptions<T, R = T> {
  backend: string;
  pool: TargetPool;
  /** Extra attempts after a connection error (the backend's `retries`). */
  retries: number;
  /** For the 504 message. */
  timeoutSecs: number;
  req: RequestEnvelope;
  signal: AbortState;
  logger: Logger;
  /** Send the request to one target. */
  send(target: Target, body: BodySource): Promise<R>;
  /** The call's answer of an attempt's (absent: it is the attempt's own). */
  answer?(raw: R): T;
  /**
   * A failure caused by the client's own body rather than the target: answered with this error
   * and not counted against the target's health.
   */
  clientFault?(err: unknown): GatewayError | undefined;
  /** True when a failed attempt may go out again (besides an idempotent method). */
  unprocessed?(err: unknown): boolean;
}

/**
 * Run the attempts; returns the first answer or throws the GatewayError of the last failure.
 * The first attempt's answer is passed on without an async frame of ours (most requests need
 * one attempt); a failure continues in {@link afterFailure}.
 */
export function sendWithFailover<T, R = T>(o: FailoverOptions<T, R>): Promise<T> {
  let target: Target;
  try {
    target = o.pool.pick(undefined);
  } catch (err) {
    return Promise.reject(err);
  }
  target.inFlight++;
  let body: BodySource = null;
  let sent: Promise<R>;
  try {
    body = o.req.body.forwardable();
    sent = o.send(target, body);
  } catch (err) {
    return afterFailure(o, err, target, body);
  }
  return sent.then(
    (res) => {
      o.pool.success(target);
      target.inFlight--;
      return o.answer ? o.answer(res) : res as unknown as T;
    },
    (err) => afterFailure(o, err, target, body),
  );
}

/**
 * The attempts after the first one failed with `err` on `target` (whose in-flight count is still
 * raised): 504, 499, a retry on another target, or 502.
 */
async function afterFailure<T, R>(
  o: FailoverOptions<T, R>,
  err: unknown,
  target: Target,
  body: BodySource,
): Promise<T> {
  const { req, pool } = o;
  // The targets already tried, made on the first retry.
  let tried: Set<Target> | undefined;
  for (let attempt = 1;; attempt++) {
    try {
      judge(o, err, target, body, attempt);
    } finally {
      target.inFlight--;
    }
    tried ??= new Set();
    tried.add(target);
    if (tried.size >= pool.targets.length) tried.clear();
    target = pool.pick(tried);
    target.inFlight++;
    body = null;
    try {
      body = req.body.forwardable();
      const res = await o.send(target, body);
      pool.success(target);
      target.inFlight--;
      return o.answer ? o.answer(res) : res as unknown as T;
    } catch (error) {
      err = error;
    }
  }
}

/** Throws the error a failed attempt ends with, or returns when it may be sent again. */
function judge<T, R>(
  o: FailoverOptions<T, R>,
  err: unknown,
  target: Target,
  body: BodySource,
  attempt: number,
): void {
  const { req, pool } = o;
  const limitError = req.body.streamError;
  if (limitError) throw limitError;
  if (err instanceof GatewayError) throw err;
  if (o.signal.aborted) {
    const reason = o.signal.reason;
    if (reason instanceof DOMException && reason.name === "TimeoutError") {
      pool.failure(target, o.logger);
      throw new GatewayError(
        504,
        "backend_timeout",
        `backend ${o.backend} (${target.name}) did not answer within ${o.timeoutSecs} s`,
      );
    }
    throw new GatewayError(499, "client_closed", "client closed the request");
  }
  // The client's body broke off (it left mid-upload): 499, and not the target's fault.
  const fault = clientBodyBroke(err) ?? o.clientFault?.(err);
  if (fault) throw fault;
  pool.failure(target, o.logger);
  const replayable = !(body instanceof ReadableStream) || req.body.replayable;
  const again = IDEMPOTENT.has(req.method) || (o.unprocessed?.(err) ?? false);
  if (attempt < 1 + o.retries && replayable && again) {
    o.logger.warn("retrying after connection error", {
      backend: o.backend,
      target: target.name,
      attempt,
      error: (err as Error).message,
    });
    return;
  }
  throw new GatewayError(
    502,
    "backend_unavailable",
    `backend ${o.backend} (${target.name}) is unavailable: ${(err as Error).message}`,
  );
}
