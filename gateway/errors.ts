/** The one error type of the data plane: an HTTP status, a stable code and a message. */

/** An error that maps to a client-visible response (`{"error":{code,message,request_id}}`). */
export class GatewayError extends Error {
  /** HTTP status of the error response. */
  readonly status: number;
  /** Machine-readable error code (`backend_unavailable`). */
  readonly code: string;
  /** Extra JSON details for the error body. */
  readonly details?: unknown;
  /**
   * What went wrong inside, for the log only (an exception's message and stack): never in the
   * response, which carries `message`.
   */
  readonly internal?: string;
  /**
   * Headers the error response carries besides the endpoint's own (e.g. `WWW-Authenticate` on a
   * 401, `Retry-After` on a 429).
   */
  headers?: Record<string, string>;

  /** An error answered with `status` and a JSON body naming `code` and the message. */
  constructor(
    status: number,
    code: string,
    message: string,
    details?: unknown,
    internal?: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = "GatewayError";
    this.status = status;
    this.code = code;
    this.details = details;
    this.internal = internal;
  }
}

/**
 * A GatewayError for a failure caught as `cause` (kept as the error's `cause`, for the log and a
 * debugger; never in the response).
 */
export function causedError(
  status: number,
  code: string,
  message: string,
  cause: unknown,
  details?: unknown,
): GatewayError {
  return new GatewayError(status, code, message, details, undefined, { cause });
}

/** What the client reads for a failure of ours whose detail is only in the log. */
export const INTERNAL_MESSAGE =
  "internal error; the gateway log has the details under this request id";

/** The detail of an unexpected exception for the log: its message and the top of its stack. */
export function internalDetail(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const frames = err.stack?.split("\n").slice(1, 6).map((l) => l.trim()).join(" | ");
  return frames ? `${err.name}: ${err.message} (${frames})` : `${err.name}: ${err.message}`;
}

/** 499 `client_closed` (nginx's code): the client went away before its answer; nobody reads it. */
export function clientClosed(cause?: unknown): GatewayError {
  return new GatewayError(
    499,
    "client_closed",
    "client closed the request",
    undefined,
    cause === undefined ? undefined : internalDetail(cause),
    cause === undefined ? undefined : { cause },
  );
}

/**
 * The 499 of `err` when it (or an error it wraps as `cause`) says that the client's request body
 * broke off because the client went away: the runtime's `Deno.errors.Http` (a TLS or HTTP/2
 * connection gone; only the HTTP server raises it, fetch reports a TypeError and our upstream
 * client an Http1Error), its BadResource for a request body whose connection is gone (cleartext
 * HTTP/1.1), or a 499 made earlier. Else undefined.
 */
export function clientBodyBroke(err: unknown): GatewayError | undefined {
  let e = err;
  for (let depth = 0; depth < 5 && e instanceof Error; depth++) {
    if (e instanceof GatewayError) return e.code === "client_closed" ? e : undefined;
    if (
      e instanceof Deno.errors.Http ||
      (e instanceof Deno.errors.BadResource && /request body/.test(e.message))
    ) return clientClosed(err);
    e = e.cause;
  }
  return undefined;
}

/**
 * Turn anything thrown into a GatewayError. Unknown errors become 500 `internal_error` with a
 * generic message: their own text (a stack overflow, a library's internals) goes to the log only.
 * A client body that broke off is 499 `client_closed`.
 */
export function toGatewayError(err: unknown): GatewayError {
  if (err instanceof GatewayError) return err;
  // A limit error raised inside a stream reaches us wrapped by fetch or the stream machinery.
  const cause = (err as { cause?: unknown })?.cause;
  if (cause instanceof GatewayError) return cause;
  return clientBodyBroke(err) ??
    new GatewayError(500, "internal_error", INTERNAL_MESSAGE, undefined, internalDetail(err));
}

/** Errors already logged and counted where they happened (see {@link markRecorded}). */
const RECORDED = new WeakSet<object>();

/**
 * Marks `err` as logged and counted where it happened: a streamed answer that broke off after
 * its head was sent errors its stream with it, and the listener, which sees it next, must not
 * report it a second time as a failure of its own.
 */
export function markRecorded<E extends object>(err: E): E {
  RECORDED.add(err);
  return err;
}

/** True when `err` was marked by {@link markRecorded}. */
export function wasRecorded(err: unknown): boolean {
  return typeof err === "object" && err !== null && RECORDED.has(err);
}

/** The JSON error body every HTTP error response carries. */
export function errorBody(err: GatewayError, requestId: string): string {
  const error: Record<string, unknown> = {
    code: err.code,
    message: err.message,
    request_id: requestId,
  };
  if (err.details !== undefined) error.details = err.details;
  return JSON.stringify({ error });
}
