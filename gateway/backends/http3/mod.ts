/**
 * The `http3` backend: requests to an upstream over HTTP/3 (QUIC), one pooled connection per
 * target, on the protocol code of gateway/http3.
 *
 * @module
 */
export * from "./backend.ts";
export * from "./pool.ts";
