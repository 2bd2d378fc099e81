/**
 * The `hl7` endpoint service: an MLLP listener per endpoint address (listeners.ts) whose messages
 * go through the pipeline and are acknowledged with its outcome (endpoint.ts, ack_plan.ts).
 *
 * @example
 * ```ts
 * import { ackCodes } from "./mod.ts";
 *
 * // MSH-15 = AL, MSH-16 = NE (enhanced mode): a commit accept and no application ACK.
 * console.log(ackCodes("message", "AL", "NE", "accept")); // [ "CA" ]
 * // Neither set (original mode): the pipeline's outcome.
 * console.log(ackCodes("message", "", "", "error")); // [ "AE" ]
 * ```
 *
 * @module
 */
import { resolve } from "node:path";
import type { EndpointConfig } from "../../../shared/gateway_config/mod.ts";
import type { MllpTlsServer } from "../../adapters/mllp/mod.ts";
import type { BuiltPipeline } from "../../pipeline/mod.ts";
import { Hl7Endpoint, type Hl7Options } from "./endpoint.ts";

export { ackCodes, type AckMode, isEnhanced, type Verdict } from "./ack_plan.ts";
export { Hl7Endpoint, hl7ListenerKey, type Hl7Options, type Tracker } from "./endpoint.ts";
export { Hl7Listeners } from "./listeners.ts";
export { HL7_ER7, hl7Envelope, hl7Metadata } from "./message.ts";

/**
 * Build an `hl7` endpoint (its listener is started by the gateway); reads its TLS files, throwing
 * with the key of one that cannot be read.
 */
export async function createHl7Endpoint(
  config: EndpointConfig,
  pipeline: BuiltPipeline,
  baseDir: string,
): Promise<Hl7Endpoint> {
  const o = config.options as unknown as Hl7Options;
  let tls: MllpTlsServer | undefined;
  if (o.tls_cert_path && o.tls_key_path) {
    const read = async (key: keyof Hl7Options) => {
      const path = resolve(baseDir, String(o[key]));
      try {
        return await Deno.readTextFile(path);
      } catch (err) {
        throw new Error(`options.${key}: cannot read ${path}: ${(err as Error).message}`);
      }
    };
    tls = {
      cert: await read("tls_cert_path"),
      key: await read("tls_key_path"),
      clientCa: o.tls_client_ca_path ? await read("tls_client_ca_path") : undefined,
    };
  }
  return new Hl7Endpoint(config, pipeline, tls);
}
