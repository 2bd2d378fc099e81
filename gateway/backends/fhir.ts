/**
 * The `fhir` backend: the `http` backend plus a check that what a FHIR server returns is FHIR
 * (JSON or XML), so a misrouted HTML error page never reaches a FHIR client as a resource.
 */
import type { BackendConfig } from "../../shared/gateway_config/mod.ts";
import { parseMediaType } from "../codecs/mod.ts";
import type { ResponseEnvelope } from "../envelope.ts";
import { GatewayError } from "../errors.ts";
import type { Backend, BuildContext } from "../pipeline/mod.ts";
import { loadUpstreamAccess } from "./credentials/mod.ts";
import { HttpBackend } from "./http.ts";

const FHIR_TYPES = new Set([
  "application/fhir+json",
  "application/json",
  "application/fhir+xml",
  "application/xml",
  "text/xml",
  "application/json-patch+json",
]);

/**
 * Refuses a non-empty response that is not JSON or XML. A success (2xx, 3xx) is a 502
 * `invalid_fhir_response`: the client must not get an HTML page as a resource. An error answer
 * (an HTML 404 from a proxy in front of the FHIR server, a 503 page) keeps its status and becomes
 * a `backend_error` whose message names what came back, so the FHIR endpoint answers an
 * OperationOutcome with the same status: a 404 stays a 404.
 */
export function checkFhirResponse(res: ResponseEnvelope, backend: string): void {
  if (res.status === 204 || res.status === 304 || res.body.isEmpty) return;
  if (res.body.knownLength === 0) return;
  const mt = parseMediaType(res.headers.get("content-type"));
  if (mt && FHIR_TYPES.has(mt.type)) return;
  // The body is not passed on: release the upstream stream.
  const dropped = res.body.forwardable();
  if (dropped instanceof ReadableStream) dropped.cancel().catch(() => {});
  const type = mt?.type ?? "(none)";
  if (res.status >= 400 && res.status <= 599) {
    throw new GatewayError(
      res.status,
      "backend_error",
      `backend ${backend} answered ${res.status} with content type ${type} instead of a FHIR OperationOutcome`,
    );
  }
  throw new GatewayError(
    502,
    "invalid_fhir_response",
    `backend ${backend} answered ${res.status} with content type ${type}, not a FHIR type (application/fhir+json or application/fhir+xml)`,
  );
}

/** Build a `fhir` backend (reads its credential and TLS files). */
export async function createFhirBackend(
  config: BackendConfig,
  ctx: BuildContext,
): Promise<Backend> {
  return new HttpBackend(
    config,
    ctx,
    checkFhirResponse,
    await loadUpstreamAccess(config, ctx.baseDir),
  );
}
