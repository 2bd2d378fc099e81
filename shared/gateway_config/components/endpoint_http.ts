/**
 * The `http` endpoint type: its options table, as the registry (components/mod.ts) lists it.
 */
import type { ComponentType } from "../component_type.ts";
import { requiredPrefix } from "./http_family.ts";

/** `service = "http"`: the type's option schema. */
export const httpEndpoint: ComponentType = {
  kind: "endpoint",
  name: "http",
  ...requiredPrefix("/api"),
};
