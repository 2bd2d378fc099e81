/**
 * The `request_filter` middleware type: its options table, as the registry (components/mod.ts) lists it.
 */
import { z } from "zod";
import type { ComponentType } from "../component_type.ts";
import { field } from "../fields.ts";
import { int } from "../values.ts";
import { headerName } from "./middleware_fields.ts";

/** FHIR RESTful interactions (gateway/middleware/request_kind.ts classifies requests). */
export const FHIR_INTERACTIONS = [
  "read",
  "vread",
  "update",
  "patch",
  "delete",
  "history",
  "create",
  "search",
  "capabilities",
  "batch",
  "operation",
] as const;

/** DICOMweb services: QIDO-RS search, WADO-RS retrieve, STOW-RS store. */
export const DICOMWEB_SERVICES = ["qido", "wado", "stow"] as const;

/** A URLPattern pathname (`/Patient/:id`, `/studies/*`). */
const urlPatternPath = z.string().max(512).startsWith("/", "starts with `/`")
  // Regular-expression groups (`:id(\\d+)`) are refused: a pattern from a pushed configuration
  // must not be able to make matching a request path run in more than linear time.
  .refine((p) => !/[()]/.test(p), "named parameters, `*` and `{…}?` only, no `(` regexp groups")
  .refine((p) => {
    try {
      new URLPattern({ pathname: p });
      return true;
    } catch {
      return false;
    }
  }, "a URLPattern pathname such as /Patient/:id or /studies/*");

/** `type = "request_filter"`: the type's option schema. */
export const requestFilterMiddleware: ComponentType = {
  kind: "middleware",
  name: "request_filter",
  doc: "What a pipeline accepts: methods, paths, required headers, body size, FHIR resource " +
    "types and interactions, DICOMweb services; 403 `request_not_allowed` (405 for methods).",
  fields: {
    methods: field(
      "array of strings",
      z.array(z.string().regex(/^[A-Z]{1,20}$/, "an HTTP method in capitals")),
      "Methods accepted (empty: any).",
      { default: [], example: ["GET", "HEAD"] },
    ),
    paths: field(
      "array of strings",
      z.array(urlPatternPath),
      "URLPattern pathnames below the endpoint's prefix; one must match (empty: any).",
      { default: [], example: ["/Patient/:id", "/Observation{/*}?"] },
    ),
    required_headers: field(
      "array of strings",
      z.array(headerName),
      "Headers every request must carry.",
      {
        default: [],
        example: ["x-tenant"],
      },
    ),
    max_body_bytes: field(
      "integer",
      int(0),
      "Largest body by its declared length (a chunked body stays bounded by max_body_size).",
      { example: 1_048_576 },
    ),
    fhir_resource_types: field(
      "array of strings",
      z.array(z.string().regex(/^[A-Z][A-Za-z]{0,63}$/, "a FHIR resource type")),
      "FHIR resource types accepted (system-level calls refused when set).",
      { default: [], example: ["Patient", "Observation"] },
    ),
    fhir_interactions: field(
      "array of strings",
      z.array(z.enum(FHIR_INTERACTIONS)),
      "FHIR interactions accepted.",
      { default: [], example: ["read", "search"] },
    ),
    dicomweb_services: field(
      "array of strings",
      z.array(z.enum(DICOMWEB_SERVICES)),
      "DICOMweb services accepted (QIDO-RS search, WADO-RS retrieve, STOW-RS store).",
      { default: [], example: ["qido", "wado"] },
    ),
  },
};
