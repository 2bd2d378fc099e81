/**
 * The `fhir` backend type: its options table, as the registry (components/mod.ts) lists it.
 */
import type { BackendOwner, ComponentType } from "../component_type.ts";
import { httpLike } from "./http_family.ts";

/** `service = "fhir"`: the type's option schema. */
export const fhirBackend: ComponentType<BackendOwner> = {
  kind: "backend",
  name: "fhir",
  ...httpLike("FHIR server.", "http://hapi:8080/fhir"),
};
