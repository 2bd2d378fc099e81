/**
 * The `transform` middleware type: its options table, as the registry (components/mod.ts) lists it.
 */
import type { ComponentType } from "../component_type.ts";
import { transformFields } from "./middleware_fields.ts";

/** `type = "transform"`: the type's option schema. */
export const transformMiddleware: ComponentType = {
  kind: "middleware",
  name: "transform",
  ...{ doc: "JSON-to-JSON JOLT transform of `data`.", fields: transformFields("data") },
};
