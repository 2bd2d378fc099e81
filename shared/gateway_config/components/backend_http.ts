/**
 * The `http` backend type: its options table, as the registry (components/mod.ts) lists it.
 */
import type { BackendOwner, ComponentType } from "../component_type.ts";
import { httpLike } from "./http_family.ts";

/** `service = "http"`: the type's option schema. */
export const httpBackend: ComponentType<BackendOwner> = {
  kind: "backend",
  name: "http",
  ...httpLike("HTTP upstream.", "http://127.0.0.1:8081"),
};
