/**
 * Listeners: HTTP/1.1 and HTTP/2 (Deno.serve), HTTP/3 over Deno's QUIC, and the `ListenerSet`
 * shape of listener sets across reloads; the DIMSE transport is in `dimse/`.
 *
 * @module
 */
export {
  assertPortFree,
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
