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

/** What one backend call needs from its backend. */
export interface FailoverOptions<T> {
  backend: string;
  pool: TargetPool;
  /** Extra attempts after a connection error (the backend's `retries`). */
  retries: number;
  /** For the 504 message. */
  timeoutSecs: number;
  req: RequestEnvelope;
  signal: AbortSignal;
  logger: Logger;
  /** Send the request to one target. */
  send(target: Target, body: BodySource): Promise<T>;
  /**
   * A failure caused by the client's own body rather than the target: answered with this error
   * and not counted against the target's health.
   */
  clientFault?(err: unknown): GatewayError | undefined;
  /** True when a failed attempt may go out again (besides an idempotent method). */
  unprocessed?(err: unknown): boolean;
}

/** Run the attempts; returns the first answer or throws the GatewayError of the last failure. */
export async function sendWithFailover<T>(o: FailoverOptions<T>): Promise<T> {
  const { req, pool } = o;
  // The targets already tried, made on the first retry (most requests never need it).
  let tried: Set<Target> | undefined;
  const attempts = 1 + o.retries;
  for (let attempt = 1;; attempt++) {
    const target = pool.pick(tried);
    target.inFlight++;
    let body: BodySource = null;
    try {
      body = req.body.forwardable();
      const res = await o.send(target, body);
      pool.success(target);
      return res;
    } catch (err) {
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
      if (attempt < attempts && replayable && again) {
        o.logger.warn("retrying after connection error", {
          backend: o.backend,
          target: target.name,
          attempt,
          error: (err as Error).message,
        });
        tried ??= new Set();
        tried.add(target);
        if (tried.size >= pool.targets.length) tried.clear();
        continue;
      }
      throw new GatewayError(
        502,
        "backend_unavailable",
        `backend ${o.backend} (${target.name}) is unavailable: ${(err as Error).message}`,
      );
    } finally {
      target.inFlight--;
    }
  }
}
