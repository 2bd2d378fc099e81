/**
 * What a request is, for filters and scopes: the FHIR interaction and resource type of a request
 * to a FHIR endpoint (the RESTful API of FHIR R4/R5 §3.1.0), and the DICOMweb service of a request
 * to a DICOMweb endpoint (PS3.18: QIDO-RS search, WADO-RS retrieve, STOW-RS store). Paths are
 * those below the endpoint's prefix, classified by their decoded segments (request_path.ts), as
 * the server will read them: a path that cannot be decoded unambiguously is none of the API.
 */
import { DICOMWEB_SERVICES, FHIR_INTERACTIONS } from "../../shared/gateway_config/mod.ts";
import { decidePath } from "./request_path.ts";

/** A FHIR interaction (`operation` for `$name` calls). */
export type FhirInteraction = typeof FHIR_INTERACTIONS[number];

/** The interaction of a FHIR request and the resource type it names (none at system level). */
export interface FhirRequest {
  interaction: FhirInteraction;
  resourceType?: string;
}

const RESOURCE_TYPE = /^[A-Z][A-Za-z]{0,63}$/;

/** The decoded segments of a raw path, or decoded segments as given; null when ambiguous. */
function segmentsOf(path: string | readonly string[]): readonly string[] | null {
  if (typeof path !== "string") return path;
  return decidePath(path).segments ?? null;
}

/**
 * Classifies a FHIR request by method and path (raw, or its decoded segments); null when it is
 * none of the API.
 */
export function fhirRequest(method: string, path: string | readonly string[]): FhirRequest | null {
  const s = segmentsOf(path);
  if (s === null) return null;
  const m = method.toUpperCase();
  const op = s.findIndex((p) => p.startsWith("$"));
  if (op >= 0) {
    const type = op > 0 && RESOURCE_TYPE.test(s[0]) ? s[0] : undefined;
    return { interaction: "operation", resourceType: type };
  }
  if (s.length === 0) {
    if (m === "POST") return { interaction: "batch" };
    if (m === "GET") return { interaction: "search" };
    return null;
  }
  if (s.length === 1 && s[0] === "metadata") {
    return m === "GET" ? { interaction: "capabilities" } : null;
  }
  if (s[0] === "_history" && s.length === 1 && m === "GET") return { interaction: "history" };
  if (s[0] === "_search" && s.length === 1 && m === "POST") return { interaction: "search" };
  if (!RESOURCE_TYPE.test(s[0])) return null;
  const resourceType = s[0];
  const at = (interaction: FhirInteraction): FhirRequest => ({ interaction, resourceType });
  if (s.length === 1) {
    if (m === "GET") return at("search");
    if (m === "POST") return at("create");
    if (m === "PUT") return at("update"); // conditional update
    if (m === "PATCH") return at("patch");
    if (m === "DELETE") return at("delete"); // conditional delete
    return null;
  }
  if (s.length === 2 && s[1] === "_search" && m === "POST") return at("search");
  if (s.length === 2 && s[1] === "_history" && m === "GET") return at("history");
  if (s.length === 2) {
    if (m === "GET" || m === "HEAD") return at("read");
    if (m === "PUT") return at("update");
    if (m === "PATCH") return at("patch");
    if (m === "DELETE") return at("delete");
    return null;
  }
  if (s[2] === "_history") {
    if (s.length === 3 && m === "GET") return at("history");
    if (s.length === 4 && m === "GET") return at("vread");
    return null;
  }
  // Compartment search: /Patient/123/Observation.
  if (s.length === 3 && RESOURCE_TYPE.test(s[2]) && m === "GET") {
    return { interaction: "search", resourceType: s[2] };
  }
  return null;
}

/** A DICOMweb service. */
export type DicomwebService = typeof DICOMWEB_SERVICES[number];

/**
 * The DICOMweb service of a request, as the `dicomweb` endpoint routes it (docs/dicom.md "Routes"):
 * POST to studies is STOW-RS; GET of a collection (`/studies`, `…/series`, `…/instances`) is
 * QIDO-RS; any other GET (a study, series, instance, their metadata, frames, rendered, thumbnail,
 * bulk data) is WADO-RS. Null otherwise.
 */
export function dicomwebService(
  method: string,
  path: string | readonly string[],
): DicomwebService | null {
  const s = segmentsOf(path);
  if (s === null) return null;
  const m = method.toUpperCase();
  // BulkDataURIs (`/bulkdata/…`) are retrieved, never searched or stored.
  if (s[0] === "bulkdata") return (m === "GET" || m === "HEAD") && s.length > 1 ? "wado" : null;
  if (s[0] !== "studies" && s[0] !== "series" && s[0] !== "instances") return null;
  if (m === "POST") return s[0] === "studies" && s.length <= 2 ? "stow" : null;
  if (m !== "GET" && m !== "HEAD") return null;
  const last = s[s.length - 1];
  return last === "studies" || last === "series" || last === "instances" ? "qido" : "wado";
}
