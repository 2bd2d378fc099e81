/**
 * HTTP/3 (RFC 9114) with QPACK (RFC 9204) over Deno's QUIC: used by the listener and backend.
 *
 * @example
 * ```ts
 * import { H3, Http3Error } from "./mod.ts";
 *
 * // RFC 9114 error codes, and the error a stream or connection is closed with.
 * const err = new Http3Error(H3.FRAME_UNEXPECTED, "stream", "DATA before HEADERS");
 * console.log(err.code === 0x105, err.message); // true H3_FRAME_UNEXPECTED: DATA before HEADERS
 * ```
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
