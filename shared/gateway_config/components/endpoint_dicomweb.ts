/**
 * The `dicomweb` endpoint type: its options table, as the registry (components/mod.ts) lists it.
 */
import type { ComponentType } from "../component_type.ts";
import { field } from "../fields.ts";
import { pathPrefix } from "../values.ts";
import { PATH_PREFIX_DOC } from "./http_family.ts";

/** `service = "dicomweb"`: the type's option schema. */
export const dicomwebEndpoint: ComponentType = {
  kind: "endpoint",
  name: "dicomweb",
  doc:
    "DICOMweb endpoint: QIDO-RS, WADO-RS and STOW-RS, forwarded to a `dicomweb` backend or bridged to a `dicom_scu` one (other backends: 501 Not Implemented).",
  fields: {
    path_prefix: field("string", pathPrefix(), PATH_PREFIX_DOC, {
      default: "/dicomweb",
      example: "/dicomweb",
    }),
  },
};
