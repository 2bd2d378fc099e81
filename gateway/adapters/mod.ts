/**
 * Listeners: HTTP/1.1 and HTTP/2 (Deno.serve), HTTP/3 over Deno's QUIC, and the `ListenerSet`
 * shape of listener sets across reloads; the DIMSE transport is in `dimse/`, MLLP (HL7 v2) in
 * `mllp/`.
 *
 * @example
 * ```ts
 * import { assertPortFree } from "./mod.ts";
 *
 * // A taken port is refused at start, naming what wanted it.
 * const taken = Deno.listen({ hostname: "127.0.0.1", port: 0 });
 * try {
 *   assertPortFree("127.0.0.1", (taken.addr as Deno.NetAddr).port, "network main");
 * } catch (err) {
 *   console.log((err as Error).message.startsWith("network main")); // true
 * } finally {
 *   taken.close();
 * }
 * ```
 *
 * @module
 */
export {
  assertPortFree,
  guardOf,
  type HttpListener,
  listenerKey,
  type NetworkHandler,
  readTls,
  serveNetwork,
  type TlsMaterial,
} from "./http.ts";
export {
  altSvcValue,
  assertUdpPortFree,
  checkHttp3Material,
  type Http3Listener,
  http3ListenerKey,
  readHttp3Tls,
  serveHttp3,
  withAltSvc,
} from "./http3.ts";
export type { ListenerSet } from "./listener_set.ts";
