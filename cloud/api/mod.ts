/**
 * The JSON API of the cloud service: routes, errors, bodies, limits and the OpenAPI document.
 *
 * @example
 * ```ts
 * import { ApiError, errorBody } from "./mod.ts";
 *
 * // Every failure of the API is one JSON shape: a stable code, a message, the fields at fault.
 * const err = new ApiError(400, "invalid_request", "the body has problems", {
 *   fields: [{ field: "name", message: "required" }],
 * });
 * console.log(JSON.stringify(errorBody(err, "rid-1")));
 * ```
 *
 * @module
 */
import { Hono } from "hono";
import { BadCursorError, StoreError } from "../store/mod.ts";
import { PreviewLimitError } from "../preview/mod.ts";
import type { Services } from "../services.ts";
import { mountAccount } from "./account/mod.ts";
import type { AppEnv } from "./env.ts";
import { ApiError, errorResponse } from "./errors.ts";
import { mountInvitations } from "./invitations/mod.ts";
import { mountResourceActions } from "./resource_actions/mod.ts";
import { mountGateway } from "./gateway_sync/mod.ts";
import { mountOAuth } from "./oauth.ts";
import { mountOAuthClients } from "./oauth_clients.ts";
import { mountOpenApi } from "./openapi.ts";
import { Registry } from "./registry.ts";
import { mountResources } from "./resources.ts";
import { mountWellKnown } from "./well_known.ts";

export type { AppEnv, AppVariables } from "./env.ts";
export { ApiError, errorBody, errorResponse, type FieldProblem } from "./errors.ts";
export { clientIp, requestContext, spend } from "./middleware.ts";
export { openApiDocument } from "./openapi.ts";
export { routesMarkdown } from "./docs.ts";
export { type AuthKind, type Method, openApiPath, Registry, type RouteDoc } from "./registry.ts";
export { CREATE_EXAMPLES, EXAMPLE_IDS, EXAMPLE_ORDER, UPDATE_EXAMPLES } from "./examples.ts";
export { readBytes, readJson, validate } from "./body.ts";

/** Mounts every API route on `app`; returns the registry (the routes and their documentation). */
export function mountApi(app: Hono<AppEnv>, s: Services): Registry {
  const reg = new Registry(app);
  // First: it puts CORS in front of the discovery and token routes mounted after it.
  mountOAuthClients(reg, s);
  mountWellKnown(reg, s);
  mountOAuth(reg, s);
  mountAccount(reg);
  mountInvitations(reg);
  mountGateway(reg);
  mountResourceActions(reg);
  mountResources(reg);
  mountOpenApi(reg, s);
  return reg;
}

/** Maps store errors to API errors; anything else passes through. */
export function toApiError(err: unknown): ApiError | undefined {
  if (err instanceof ApiError) return err;
  if (err instanceof BadCursorError) {
    return new ApiError(422, "validation_failed", err.message, {
      fields: [{ field: "cursor", message: err.message }],
    });
  }
  if (err instanceof PreviewLimitError) {
    // The budget's or the deadline's figure rides along (`budget_steps`, `deadline_ms`).
    const retry = err.details.retry_after_s;
    return new ApiError(err.status, err.code, err.message, {
      details: err.details,
      ...(retry ? { headers: { "Retry-After": String(retry) } } : {}),
    });
  }
  if (!(err instanceof StoreError)) return undefined;
  const field = err.field ? { fields: [{ field: err.field, message: err.message }] } : {};
  switch (err.code) {
    case "not_found":
      return new ApiError(404, "not_found", err.message);
    case "name_taken":
      return new ApiError(409, "name_taken", err.message, field);
    case "reference_missing":
      return new ApiError(422, "reference_missing", err.message, field);
    case "in_use":
      return new ApiError(409, "in_use", err.message, { details: err.details });
    case "conflict":
      return new ApiError(409, "conflict", err.message, field);
    case "too_large":
      return new ApiError(413, "payload_too_large", err.message);
    case "forbidden":
      return new ApiError(403, "forbidden", err.message);
    case "invalid": {
      const { fields, ...rest } = err.details ?? {};
      return new ApiError(422, "validation_failed", err.message, {
        fields: (fields as { field: string; message: string }[] | undefined) ??
          (err.field ? [{ field: err.field, message: err.message }] : undefined),
        details: rest,
      });
    }
  }
}

/** A JSON error answer for anything thrown in a handler (unexpected errors are logged, not shown). */
export function handleApiError(err: unknown, c: import("hono").Context<AppEnv>): Response {
  const api = toApiError(err);
  if (api) return errorResponse(c, api);
  c.get("services")?.options.logger.error("unhandled error", {
    request_id: c.get("requestId"),
    path: c.req.path,
    error: err instanceof Error ? `${err.name}: ${err.message}` : String(err),
  });
  return errorResponse(
    c,
    new ApiError(500, "internal_error", "an unexpected error occurred; it was logged"),
  );
}
export { bearerAuth, requireBearer, userOf } from "./middleware.ts";
export { MCP_RESOURCE_METADATA_PATH, requestAuthority } from "./well_known.ts";
