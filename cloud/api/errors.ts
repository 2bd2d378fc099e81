/**
 * API errors: `{"error":{"code","message","fields"?,"request_id"}}` with a fitting status. Handlers
 * throw {@link ApiError}; the app's error handler renders it (and hides anything unexpected).
 */
import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";

/** One field-level problem of a request body or query. */
export interface FieldProblem {
  /** Dotted path of the field (`targets.0.url`); empty for the body itself. */
  field: string;
  message: string;
}

/** An error the API answers with. */
export class ApiError extends Error {
  readonly status: ContentfulStatusCode;
  readonly code: string;
  readonly fields?: FieldProblem[];
  readonly headers?: Record<string, string>;
  /** Extra members of the error object (e.g. `problems` of a configuration). */
  readonly details?: Record<string, unknown>;

  constructor(
    status: ContentfulStatusCode,
    code: string,
    message: string,
    extra: {
      fields?: FieldProblem[];
      headers?: Record<string, string>;
      details?: Record<string, unknown>;
    } = {},
  ) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.code = code;
    this.fields = extra.fields;
    this.headers = extra.headers;
    this.details = extra.details;
  }
}

/** 404 with the same answer whether the record does not exist or belongs to another team. */
export function notFound(what: string): ApiError {
  return new ApiError(404, "not_found", `${what} not found`);
}

/** 401 for a missing, malformed, expired or revoked credential. */
export function unauthorized(
  message = "a valid bearer token is required",
  challenge = 'Bearer realm="gateway-cloud"',
): ApiError {
  return new ApiError(401, "unauthorized", message, {
    headers: { "WWW-Authenticate": challenge },
  });
}

/** 403 for a credential that is valid but not allowed to do this. */
export function forbidden(message: string): ApiError {
  return new ApiError(403, "forbidden", message);
}

/** 429 with `Retry-After`. */
export function tooManyRequests(retryAfterSeconds: number): ApiError {
  return new ApiError(
    429,
    "rate_limited",
    `too many requests: retry after ${retryAfterSeconds} s`,
    { headers: { "Retry-After": String(retryAfterSeconds) } },
  );
}

/** The JSON body of an error. */
export function errorBody(err: ApiError, requestId?: string): Record<string, unknown> {
  return {
    error: {
      code: err.code,
      message: err.message,
      ...(err.fields ? { fields: err.fields } : {}),
      ...err.details,
      ...(requestId ? { request_id: requestId } : {}),
    },
  };
}

/** Renders `err` as the JSON error response. */
export function errorResponse(c: Context, err: ApiError): Response {
  for (const [k, v] of Object.entries(err.headers ?? {})) c.header(k, v);
  return c.json(errorBody(err, c.get("requestId" as never)), err.status);
}
