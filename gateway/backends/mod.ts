/**
 * Backend service types and their factories.
 *
 * @example
 * ```ts
 * import { BACKEND_FACTORIES, withoutHopByHop } from "./mod.ts";
 *
 * console.log(Object.keys(BACKEND_FACTORIES).includes("dicom_scu")); // true
 * // What a proxy must not forward: Connection and the fields it names, Keep-Alive, TE...
 * const sent = withoutHopByHop(new Headers({ connection: "x-trace", "x-trace": "1", accept: "text/html" }));
 * console.log([...sent.keys()]); // [ "accept" ]
 * ```
 *
 * @module
 */
import type { BackendFactory } from "../pipeline/mod.ts";
import { createEchoBackend } from "./echo.ts";
import { createFhirBackend } from "./fhir.ts";
import { createHttpBackend } from "./http.ts";

export { EchoBackend } from "./echo.ts";
export { checkFhirResponse } from "./fhir.ts";
export { HttpBackend } from "./http.ts";
export { upstreamHeaders, withoutHopByHop } from "./proxy_headers.ts";

/** Factories by backend service type; a type missing here is refused at config load. */
export const BACKEND_FACTORIES: Partial<Record<string, BackendFactory>> = {
  echo: createEchoBackend,
  http: createHttpBackend,
  fhir: createFhirBackend,
  // HTTP/3 (issue 5): the QUIC backend.
  http3: (c, ctx) => import("./http3/mod.ts").then((m) => m.createHttp3Backend(c, ctx)),
  storage: (c, ctx) => import("./storage/mod.ts").then((m) => m.createStorageBackend(c, ctx)),
  // DICOM (issue 4): the DIMSE SCU backend and the DICOMweb backend (dcmjs, dcmjs-dimse).
  dicom_scu: (c, ctx) => import("./dicom_scu/mod.ts").then((m) => m.createDicomScuBackend(c, ctx)),
  dicomweb: (c, ctx) => import("./dicomweb/mod.ts").then((m) => m.createDicomwebBackend(c, ctx)),
  // HL7 v2 (issue 37): the MLLP client.
  hl7: (c, ctx) => import("./hl7/mod.ts").then((m) => m.createHl7Backend(c, ctx)),
};
