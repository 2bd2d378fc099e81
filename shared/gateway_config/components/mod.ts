/**
 * The built-in component types, one module each (`<kind>_<name>.ts`), listed in the order the
 * reference, the writer's error messages and the cloud's forms show them. Adding a type is one
 * schema module here, one line in BUILT_IN_TYPES and its implementation in the gateway.
 *
 * @example
 * ```ts
 * import { BUILT_IN_TYPES } from "./mod.ts";
 * const middleware = BUILT_IN_TYPES.filter((t) => t.kind === "middleware").map((t) => t.name);
 * console.log(middleware.includes("cors")); // true
 * ```
 *
 * @module
 */
import type { BackendOwner, ComponentType } from "../component_type.ts";
import type { BackendService, EndpointService } from "../types.ts";
import { httpEndpoint } from "./endpoint_http.ts";
import { fhirEndpoint } from "./endpoint_fhir.ts";
import { jmixEndpoint } from "./endpoint_jmix.ts";
import { dicomwebEndpoint } from "./endpoint_dicomweb.ts";
import { dicomScpEndpoint } from "./endpoint_dicom_scp.ts";
import { hl7Endpoint } from "./endpoint_hl7.ts";
import { httpBackend } from "./backend_http.ts";
import { fhirBackend } from "./backend_fhir.ts";
import { dicomwebBackend } from "./backend_dicomweb.ts";
import { http3Backend } from "./backend_http3.ts";
import { dicomScuBackend } from "./backend_dicom_scu.ts";
import { storageBackend } from "./backend_storage.ts";
import { echoBackend } from "./backend_echo.ts";
import { hl7Backend } from "./backend_hl7.ts";
import { transformMiddleware } from "./middleware_transform.ts";
import { metadataTransformMiddleware } from "./middleware_metadata_transform.ts";
import { apiKeyMiddleware } from "./middleware_api_key.ts";
import { jwtAuthMiddleware } from "./middleware_jwt_auth.ts";
import { ipFilterMiddleware } from "./middleware_ip_filter.ts";
import { corsMiddleware } from "./middleware_cors.ts";
import { rateLimitMiddleware } from "./middleware_rate_limit.ts";
import { requestFilterMiddleware } from "./middleware_request_filter.ts";
import { headersMiddleware } from "./middleware_headers.ts";
import { basicAuthMiddleware } from "./middleware_basic_auth.ts";

export { DICOMWEB_SERVICES, FHIR_INTERACTIONS } from "./middleware_request_filter.ts";
export {
  checkQueueStore,
  QUEUE_NATS_DEFAULTS,
  QUEUE_NATS_FIELDS,
  QUEUE_STORE_FIELD,
  QUEUE_STORES,
} from "./queue_nats.ts";
export {
  AUDIT_SYSLOG,
  SYSLOG_FACILITIES,
  SYSLOG_TRANSPORTS,
  syslogProblems,
} from "./audit_syslog.ts";
export {
  ALERT_CHANNEL_FIELDS,
  ALERT_CHANNEL_TYPES,
  ALERT_RULE_FIELDS,
  ALERT_RULE_KINDS,
  ALERT_SEVERITIES,
  alertChannelSpec,
  alertRuleSpec,
  ALERTS,
  alertsTables,
  checkAlerts,
} from "./alerts.ts";

/** Every built-in type: one registration line each. */
export const BUILT_IN_TYPES: readonly ComponentType<BackendOwner>[] = [
  httpEndpoint,
  fhirEndpoint,
  jmixEndpoint,
  dicomwebEndpoint,
  dicomScpEndpoint,
  hl7Endpoint,
  httpBackend,
  fhirBackend,
  dicomwebBackend,
  http3Backend,
  dicomScuBackend,
  storageBackend,
  echoBackend,
  hl7Backend,
  transformMiddleware,
  metadataTransformMiddleware,
  apiKeyMiddleware,
  jwtAuthMiddleware,
  ipFilterMiddleware,
  corsMiddleware,
  rateLimitMiddleware,
  requestFilterMiddleware,
  headersMiddleware,
  basicAuthMiddleware,
];

/** Endpoint services served by the HTTP (and HTTP/3) listeners of the networks. */
export const HTTP_FAMILY_ENDPOINTS: readonly EndpointService[] = [
  "http",
  "fhir",
  "jmix",
  "dicomweb",
];

/** Backend services that call HTTP base URLs, and so may use `targets` and `health_check`. */
export const HTTP_LIKE_BACKENDS: readonly BackendService[] = ["http", "fhir", "dicomweb"];

export {
  MANAGEMENT_ROLES,
  MANAGEMENT_TOKEN,
  PIPELINE_TRACKING,
  TRACKING,
  TRACKING_STAGES,
} from "./tracking.ts";
