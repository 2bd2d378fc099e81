/**
 * The `dicom_scp` endpoint service: a DIMSE listener per endpoint (see endpoint.ts).
 *
 * @example
 * ```ts
 * import { listenerKeyOf } from "./mod.ts";
 *
 * // Endpoints on the same address share one DIMSE listener (told apart by the called AE title).
 * console.log(listenerKeyOf({ bind_addr: "0.0.0.0", port: 11112 })); // 0.0.0.0:11112
 * ```
 *
 * @module
 */
import type { DicomPeerConfig, EndpointConfig } from "../../../shared/gateway_config/mod.ts";
import type { BuiltPipeline } from "../../pipeline/mod.ts";
import { DicomScpEndpoint } from "./endpoint.ts";

export { DicomScpEndpoint, listenerKeyOf, type ScpOptions, type Tracker } from "./endpoint.ts";
export { DimseListeners } from "./listeners.ts";

/** Build a `dicom_scp` endpoint (its listener is started by the gateway). */
export function createDicomScpEndpoint(
  config: EndpointConfig,
  pipeline: BuiltPipeline,
  peers: Record<string, DicomPeerConfig>,
  baseDir: string,
): DicomScpEndpoint {
  return new DicomScpEndpoint(config, pipeline, peers, baseDir);
}
