/** The one error type of the data plane: an HTTP status, a stable code and a message. */

/** An error that maps to a client-visible response (`{"error":{code,message,request_id}}`). */
export class GatewayError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details?: unknown;

  constructor(status: number, code: string, message: string, details?: unknown) {
    super(message);
    this.name = "GatewayError";
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

/** Turn anything thrown into a GatewayError (unknown errors become 500 `internal_error`). */
export function toGatewayError(err: unknown): GatewayError {
  if (err instanceof GatewayError) return err;
  // A limit error raised inside a stream reaches us wrapped by fetch or the stream machinery.
  const cause = (err as { cause?: unknown })?.cause;
  if (cause instanceof GatewayError) return cause;
  const message = err instanceof Error ? err.message : String(err);
  return new GatewayError(500, "internal_error", message);
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
