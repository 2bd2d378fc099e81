/**
 * The `request_filter` middleware: what a pipeline accepts, checked before any backend. Methods
 * (405 with `Allow`), paths (URLPattern syntax, below the endpoint's prefix), required headers,
 * the body size by its declared length, and for FHIR and DICOMweb endpoints the resource types,
 * interactions and services (request_kind.ts). Anything else is 403 `request_not_allowed` naming
 * the rule. A request that FHIR or DICOMweb rules cannot classify is refused: the filter fails
 * closed. Paths are checked decoded, as the server will read them (request_path.ts): an
 * ambiguous path is a 400 `ambiguous_path`, and a method override naming another method a 400
 * `method_override_refused`, wherever the filter checks the path or the method.
 */
import type { MiddlewareConfig } from "../../shared/gateway_config/mod.ts";
import type { RequestEnvelope } from "../envelope.ts";
import { GatewayError } from "../errors.ts";
import type { Middleware } from "../pipeline/mod.ts";
import { dicomwebService, fhirRequest } from "./request_kind.ts";
import { decidedPathOf, refuseMethodOverride } from "./request_path.ts";

/** Options of `request_filter` (after schema checks). */
export interface RequestFilterOptions {
  methods: string[];
  paths: string[];
  required_headers: string[];
  max_body_bytes?: number;
  fhir_resource_types: string[];
  fhir_interactions: string[];
  dicomweb_services: string[];
}

function refused(message: string): GatewayError {
  return new GatewayError(403, "request_not_allowed", message);
}

/** The request filter middleware. */
export class RequestFilterMiddleware implements Middleware {
  readonly name: string;
  readonly acts = { request: true, response: false };
  readonly #o: RequestFilterOptions;
  readonly #methods: Set<string>;
  readonly #paths: URLPattern[];
  /** True when a rule depends on the path (path patterns, FHIR or DICOMweb rules). */
  readonly #checksPath: boolean;

  constructor(name: string, options: RequestFilterOptions) {
    this.name = name;
    this.#o = options;
    this.#methods = new Set(options.methods.map((m) => m.toUpperCase()));
    this.#paths = options.paths.map((p) => new URLPattern({ pathname: p }));
    this.#checksPath = this.#paths.length > 0 || options.fhir_resource_types.length > 0 ||
      options.fhir_interactions.length > 0 || options.dicomweb_services.length > 0;
  }

  onRequest(req: RequestEnvelope): void {
    const o = this.#o;
    if (this.#methods.size || this.#checksPath) refuseMethodOverride(req);
    if (this.#methods.size && !this.#methods.has(req.method.toUpperCase())) {
      const err = new GatewayError(
        405,
        "method_not_allowed",
        `method ${req.method} is not allowed here`,
      );
      err.headers = { allow: [...this.#methods].join(", ") };
      throw err;
    }
    if (!this.#checksPath) return this.#checkHeadersAndSize(req);
    const { segments, path } = decidedPathOf(req);
    if (this.#paths.length && !this.#paths.some((p) => p.test({ pathname: path }))) {
      throw refused(`path ${path} is not allowed here`);
    }
    this.#checkHeadersAndSize(req);
    if (o.fhir_resource_types.length || o.fhir_interactions.length) {
      const kind = fhirRequest(req.method, segments);
      if (!kind) throw refused(`${req.method} ${path} is not a FHIR interaction allowed here`);
      if (o.fhir_interactions.length && !o.fhir_interactions.includes(kind.interaction)) {
        throw refused(`the FHIR ${kind.interaction} interaction is not allowed here`);
      }
      if (
        o.fhir_resource_types.length &&
        (kind.resourceType === undefined || !o.fhir_resource_types.includes(kind.resourceType))
      ) {
        throw refused(
          kind.resourceType === undefined
            ? `system-level FHIR ${kind.interaction} is not allowed here`
            : `FHIR resource type ${kind.resourceType} is not allowed here`,
        );
      }
    }
    if (o.dicomweb_services.length) {
      const service = dicomwebService(req.method, segments);
      if (!service || !o.dicomweb_services.includes(service)) {
        throw refused(
          service
            ? `DICOMweb ${service.toUpperCase()}-RS is not allowed here`
            : `${req.method} ${path} is not a DICOMweb request allowed here`,
        );
      }
    }
  }

  #checkHeadersAndSize(req: RequestEnvelope): void {
    const o = this.#o;
    for (const header of o.required_headers) {
      if (!req.readHeaders.has(header)) throw refused(`the ${header} header is required`);
    }
    if (o.max_body_bytes !== undefined) {
      const length = req.body.knownLength;
      if (length !== null && length > o.max_body_bytes) {
        throw new GatewayError(
          413,
          "payload_too_large",
          `body of ${length} bytes is over this pipeline's limit of ${o.max_body_bytes} bytes`,
        );
      }
    }
  }
}

/** Build a `request_filter` middleware (options already checked by the config schema). */
export function createRequestFilterMiddleware(config: MiddlewareConfig): Middleware {
  return new RequestFilterMiddleware(
    config.name,
    config.options as unknown as RequestFilterOptions,
  );
}
