/** Listeners: HTTP/1.1 and HTTP/2 (Deno.serve); HTTP/3 and DIMSE come with their issues. */
export {
  assertPortFree,
  type HttpListener,
  listenerKey,
  type NetworkHandler,
  readTls,
  serveNetwork,
  type TlsMaterial,
} from "./http.ts";
