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
import { resolve } from "node:path";
import type { DimseTls, DimseTlsServer } from "../../adapters/dimse/mod.ts";
import type { BuiltPipeline } from "../../pipeline/mod.ts";
import type { DicomScpEndpoint, ScpOptions } from "./endpoint.ts";

export type { DicomScpEndpoint, ScpOptions, Tracker } from "./endpoint.ts";
export { listenerKeyOf } from "./listener_key.ts";
export { DimseListeners } from "./listeners.ts";

/**
 * Build a `dicom_scp` endpoint (its listener is started by the gateway); reads its TLS files,
 * throwing with the key of one that cannot be read. The endpoint's module (the DIMSE stack,
 * dcmjs-dimse, dcmjs) is loaded with the first one.
 */
export async function createDicomScpEndpoint(
  config: EndpointConfig,
  pipeline: BuiltPipeline,
  peers: Record<string, DicomPeerConfig>,
  baseDir: string,
): Promise<DicomScpEndpoint> {
  const o = config.options as unknown as ScpOptions;
  let tls: DimseTlsServer | undefined;
  if (o.tls_cert_path && o.tls_key_path) {
    const read = (key: keyof ScpOptions) => readPem(baseDir, String(o[key]), `options.${key}`);
    tls = {
      cert: await read("tls_cert_path"),
      key: await read("tls_key_path"),
      clientCa: o.tls_client_ca_path ? await read("tls_client_ca_path") : undefined,
    };
  }
  // C-MOVE destinations reached over DICOM TLS: their files are read once per configuration.
  const peerTls = new Map<string, DimseTls>();
  for (const p of Object.values(peers)) {
    if (!p.use_tls) continue;
    const at = (key: string) => `[dicom.peers.${p.aet}] ${key}`;
    peerTls.set(p.aet, {
      ca: p.ca_cert_path ? await readPem(baseDir, p.ca_cert_path, at("ca_cert_path")) : undefined,
      cert: p.cert_path ? await readPem(baseDir, p.cert_path, at("cert_path")) : undefined,
      key: p.key_path ? await readPem(baseDir, p.key_path, at("key_path")) : undefined,
    });
  }
  const { DicomScpEndpoint } = await import("./endpoint.ts");
  return new DicomScpEndpoint(config, pipeline, peers, baseDir, tls, peerTls);
}

/** A PEM file's text; a file that cannot be read is an error naming `key`. */
async function readPem(baseDir: string, file: string, key: string): Promise<string> {
  const path = resolve(baseDir, file);
  try {
    return await Deno.readTextFile(path);
  } catch (err) {
    throw new Error(`${key}: cannot read ${path}: ${(err as Error).message}`);
  }
}
