/**
 * Endpoint service types and their factories.
 *
 * @example
 * ```ts
 * import { GatewayError } from "../errors.ts";
 * import { HTTP_ENDPOINT_FACTORIES, operationOutcome } from "./mod.ts";
 *
 * console.log(Object.keys(HTTP_ENDPOINT_FACTORIES).includes("dicomweb")); // true
 * // How the fhir endpoint answers a failure: an OperationOutcome with the HTTP status's issue type.
 * const outcome = operationOutcome(new GatewayError(404, "not_found", "no Patient/1"), "rid-1");
 * console.log((outcome.issue as { code: string }[])[0].code); // not-found
 * ```
 *
 * @module
 */
import type { ContentLimits, EndpointConfig } from "../../shared/gateway_config/mod.ts";
import type { BuiltPipeline } from "../pipeline/mod.ts";
import { createFhirEndpoint } from "./fhir.ts";
import { createHttpEndpoint } from "./http.ts";
import type { HttpEndpoint } from "./types.ts";

export { DICOMWEB_ROUTES } from "./dicomweb_routes.ts";
export { FhirEndpointService, operationOutcome } from "./fhir.ts";
export { HttpEndpointService, withErrorHeaders } from "./http.ts";
export {
  type HttpEndpoint,
  type HttpExchange,
  type RequestTarget,
  requestTarget,
} from "./types.ts";

/** Builds an HTTP-family endpoint (one whose module is loaded on first use: a promise of it). */
export type HttpEndpointFactory = (
  config: EndpointConfig,
  pipeline: BuiltPipeline,
  limits: ContentLimits,
) => HttpEndpoint | Promise<HttpEndpoint>;

/** Factories by endpoint service type; a type missing here is refused at config load. */
export const HTTP_ENDPOINT_FACTORIES: Partial<Record<string, HttpEndpointFactory>> = {
  http: createHttpEndpoint,
  fhir: createFhirEndpoint,
  // DICOMweb and JMIX load the DICOM libraries (dcmjs, fflate) with their first endpoint.
  dicomweb: (c, p, l) => import("./dicomweb.ts").then((m) => m.createDicomwebEndpoint(c, p, l)),
  jmix: (c, p, l) => import("./jmix/mod.ts").then((m) => m.createJmixEndpoint(c, p, l)),
};
