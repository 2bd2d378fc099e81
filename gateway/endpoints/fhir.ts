/**
 * The `fhir` endpoint: the `http` endpoint with FHIR rules. `_format` selects the representation
 * (it overrides `Accept`), create and update bodies must be FHIR, and every
 * error is a FHIR `OperationOutcome` (`application/fhir+json`). Search parameters and `$operations`
 * pass through untouched.
 */
import type { ContentLimits, EndpointConfig } from "../../shared/gateway_config/mod.ts";
import { parseMediaType } from "../codecs/mod.ts";
import type { RequestEnvelope } from "../envelope.ts";
import { GatewayError } from "../errors.ts";
import type { BuiltPipeline } from "../pipeline/mod.ts";
import { HttpEndpointService } from "./http.ts";
import type { HttpEndpoint } from "./types.ts";

/** Content types a FHIR server accepts for resource bodies (R4/R5 §3.1.0.1.7). */
const FHIR_BODY_TYPES = new Set([
  "application/fhir+json",
  "application/json",
  "application/fhir+xml",
  "application/xml",
  "text/xml",
]);

const FORMAT_ALIASES: Record<string, string> = {
  json: "application/fhir+json",
  "application/json": "application/fhir+json",
  "application/fhir+json": "application/fhir+json",
  xml: "application/fhir+xml",
  "text/xml": "application/fhir+xml",
  "application/xml": "application/fhir+xml",
  "application/fhir+xml": "application/fhir+xml",
};

/** FHIR issue-type codes (http://hl7.org/fhir/issue-type) for our HTTP statuses. */
function issueType(status: number): string {
  return ISSUE_TYPES[status] ?? (status >= 500 ? "exception" : "processing");
}

const ISSUE_TYPES: Record<number, string> = {
  400: "invalid",
  401: "login",
  403: "forbidden",
  404: "not-found",
  405: "not-supported",
  406: "not-supported",
  408: "timeout",
  409: "conflict",
  410: "deleted",
  412: "conflict",
  413: "too-costly",
  415: "not-supported",
  422: "processing",
  429: "throttled",
  431: "too-costly",
  501: "not-supported",
  502: "transient",
  503: "transient",
  504: "timeout",
};

/** An `OperationOutcome` resource describing a gateway error. */
export function operationOutcome(err: GatewayError, requestId: string): Record<string, unknown> {
  return {
    resourceType: "OperationOutcome",
    issue: [{
      severity: "error",
      code: issueType(err.status),
      details: {
        coding: [{ system: "urn:gateway:error-code", code: err.code }],
        text: err.code,
      },
      diagnostics: `${err.message} (request id ${requestId})`,
    }],
  };
}

/** The FHIR endpoint. */
export class FhirEndpointService extends HttpEndpointService {
  protected override readonly pathShape = "fhir";
  constructor(config: EndpointConfig, pipeline: BuiltPipeline, limits: ContentLimits) {
    super(config, pipeline, limits);
  }

  /**
   * `_format` → Accept; 415 for a non-FHIR create/update body; a JSON body that does not parse
   * is a 400 OperationOutcome here, never forwarded to the FHIR server.
   */
  protected override checkRequest(env: RequestEnvelope): void | Promise<void> {
    const format = env.query.get("_format");
    if (format) {
      const accept = FORMAT_ALIASES[format.toLowerCase()];
      if (!accept) {
        throw new GatewayError(
          400,
          "invalid_format",
          `_format ${format} is not supported: use json, xml, application/fhir+json or application/fhir+xml`,
        );
      }
      // FHIR: `_format` overrides the Accept header (R4 §3.1.0.1.7).
      env.headers.set("accept", accept);
    }
    const m = env.method;
    if ((m === "POST" || m === "PUT" || m === "PATCH") && !env.body.isEmpty) {
      const type = parseMediaType(env.body.contentType)?.type;
      const search = m === "POST" && (env.path.endsWith("/_search") || env.path === "/_search") &&
        type === "application/x-www-form-urlencoded";
      const patch = m === "PATCH" &&
        (type === "application/json-patch+json" || type === "application/fhir+json" ||
          type === "application/fhir+xml");
      if (!search && !patch && !(type && FHIR_BODY_TYPES.has(type))) {
        throw new GatewayError(
          415,
          "unsupported_media_type",
          `a FHIR ${m} body must be application/fhir+json or application/fhir+xml, not ${
            type ?? "(no content type)"
          }`,
        );
      }
      // Parsed (and kept) once: a malformed or too deeply nested body is refused with its code.
      if (type === "application/fhir+json" || type === "application/json-patch+json") {
        return env.body.data().then(() => {});
      }
    }
  }

  /** Errors as OperationOutcome with `application/fhir+json`. */
  override errorResponse(err: GatewayError, requestId: string): Response {
    return new Response(JSON.stringify(operationOutcome(err, requestId)), {
      status: err.status,
      headers: { "content-type": "application/fhir+json", "x-request-id": requestId },
    });
  }
}

/** Build a `fhir` endpoint. */
export function createFhirEndpoint(
  config: EndpointConfig,
  pipeline: BuiltPipeline,
  limits: ContentLimits,
): HttpEndpoint {
  return new FhirEndpointService(config, pipeline, limits);
}
