/**
 * The `echo` backend type: its options table, as the registry (components/mod.ts) lists it.
 */
import type { BackendOwner, ComponentType } from "../component_type.ts";

/** `service = "echo"`: the type's option schema. */
export const echoBackend: ComponentType<BackendOwner> = {
  kind: "backend",
  name: "echo",
  ...{ doc: "Returns the request as the response; takes no options.", fields: {} },
};
