/**
 * HTTP/3 (RFC 9114) with QPACK (RFC 9204) over Deno's QUIC: used by the listener and backend.
 *
 * @module
 */
export { H3, Http3Error } from "./errors.ts";
export {
  Http3Client,
  type Http3ConnectOptions,
  Http3RequestError,
  type Http3RequestInit,
  type Http3Response,
} from "./client.ts";
export {
  DEFAULT_MAX_FIELD_SECTION_SIZE,
  type Http3Handler,
  type Http3RequestInfo,
  Http3Server,
  type Http3ServerOptions,
} from "./server.ts";
