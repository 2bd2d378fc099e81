/**
 * Middleware types and their factories.
 *
 * @example
 * ```ts
 * import { MIDDLEWARE_FACTORIES } from "./mod.ts";
 *
 * console.log(Object.keys(MIDDLEWARE_FACTORIES).sort());
 * // [ "api_key", "basic_auth", "cors", "headers", "ip_filter", "jwt_auth", "metadata_transform",
 * //   "rate_limit", "request_filter", "transform" ]
 * ```
 *
 * @module
 */
import type { MiddlewareFactory } from "../pipeline/mod.ts";
import {
  createApiKeyMiddleware,
  createBasicAuthMiddleware,
  createJwtAuthMiddleware,
} from "./auth/mod.ts";
import { createCorsMiddleware } from "./cors.ts";
import { createHeadersMiddleware } from "./headers.ts";
import { createIpFilterMiddleware } from "./ip_filter.ts";
import { createMetadataTransformMiddleware } from "./metadata_transform.ts";
import { createRateLimitMiddleware } from "./rate_limit.ts";
import { createRequestFilterMiddleware } from "./request_filter.ts";
import { createTransformMiddleware } from "./transform.ts";

export { MetadataTransformMiddleware } from "./metadata_transform.ts";
export { context as transformContext, TransformMiddleware } from "./transform.ts";
export { FileTransformSource, type TransformSource } from "./transform_source.ts";
export { SpecFile } from "./spec_file.ts";
export { AUTH_METADATA, type Identity } from "./auth/mod.ts";
export { type FhirInteraction, type FhirRequest, fhirRequest } from "./request_kind.ts";

/** Factories by middleware `type`; a type missing here is refused at config load. */
export const MIDDLEWARE_FACTORIES: Partial<Record<string, MiddlewareFactory>> = {
  transform: createTransformMiddleware,
  metadata_transform: createMetadataTransformMiddleware,
  api_key: createApiKeyMiddleware,
  basic_auth: createBasicAuthMiddleware,
  jwt_auth: createJwtAuthMiddleware,
  ip_filter: createIpFilterMiddleware,
  cors: createCorsMiddleware,
  headers: createHeadersMiddleware,
  rate_limit: createRateLimitMiddleware,
  request_filter: createRequestFilterMiddleware,
};
