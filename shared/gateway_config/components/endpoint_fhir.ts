/**
 * The `fhir` endpoint type: its options table, as the registry (components/mod.ts) lists it.
 */
import type { ComponentType } from "../component_type.ts";
import { requiredPrefix } from "./http_family.ts";

/** `service = "fhir"`: the type's option schema. */
export const fhirEndpoint: ComponentType = {
  kind: "endpoint",
  name: "fhir",
  ...requiredPrefix("/fhir"),
};
