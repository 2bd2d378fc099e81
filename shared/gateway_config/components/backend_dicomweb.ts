/**
 * The `dicomweb` backend type: its options table, as the registry (components/mod.ts) lists it.
 */
import type { BackendOwner, ComponentType } from "../component_type.ts";
import { httpLike } from "./http_family.ts";

/** `service = "dicomweb"`: the type's option schema. */
export const dicomwebBackend: ComponentType<BackendOwner> = {
  kind: "backend",
  name: "dicomweb",
  ...httpLike("DICOMweb server.", "http://orthanc:8042/dicom-web"),
};
