/**
 * The `fhir` backend: the `http` backend plus a check that what a FHIR server returns is FHIR
 * (JSON or XML), so a misrouted HTML error page never reaches a FHIR client as a resource.
 */
import type { BackendConfig } from "../../shared/gateway_config/types.ts";
import { parseMediaType } from "../codecs/mod.ts";
import type { ResponseEnvelope } from "../envelope.ts";
import { GatewayError } from "../errors.ts";
import type { Backend, BuildContext } from "../pipeline/types.ts";
import { HttpBackend } from "./http.ts";

const FHIR_TYPES = new Set([
  "application/fhir+json",
  "application/json",
  "application/fhir+xml",
  "application/xml",
  "text/xml",
  "application/json-patch+json",
]);

/** Throws 502 `invalid_fhir_response` for a non-empty response that is not JSON or XML. */
export function checkFhirResponse(res: ResponseEnvelope, backend: string): void {
  if (res.status === 204 || res.status === 304 || res.body.isEmpty) return;
  if (res.body.knownLength === 0) return;
  const mt = parseMediaType(res.headers.get("content-type"));
  if (mt && FHIR_TYPES.has(mt.type)) return;
  res.body.forwardable();
  throw new GatewayError(
    502,
    "invalid_fhir_response",
    `backend ${backend} answered ${res.status} with content type ${
      mt?.type ?? "(none)"
    }, not a FHIR type (application/fhir+json or application/fhir+xml)`,
  );
}

/** Build a `fhir` backend. */
export function createFhirBackend(config: BackendConfig, ctx: BuildContext): Backend {
  return new HttpBackend(config, ctx, checkFhirResponse);
}
