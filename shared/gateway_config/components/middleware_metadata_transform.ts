/**
 * The `metadata_transform` middleware type: its options table, as the registry (components/mod.ts) lists it.
 */
import type { ComponentType } from "../component_type.ts";
import { transformFields } from "./middleware_fields.ts";

/** `type = "metadata_transform"`: the type's option schema. */
export const metadataTransformMiddleware: ComponentType = {
  kind: "middleware",
  name: "metadata_transform",
  doc: "JOLT transform of the request metadata (the key-values used for routing).",
  fields: transformFields("metadata"),
};
