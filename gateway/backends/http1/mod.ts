/**
 * A pooled HTTP/1.1 client over `Deno.connect` / `Deno.connectTls` for the `http` backend:
 * keep-alive reuse, streamed bodies with backpressure, and the stale-connection retry.
 * See docs/decisions.md ("HTTP upstream client") for why it replaces `fetch`.
 */

export {
  type HeaderSource,
  Http1Client,
  type Http1ClientOptions,
  type Http1ClientStats,
  type Http1RequestInit,
} from "./client.ts";
export { Http1Error, type Http1ErrorCode } from "./errors.ts";
export type { Http1Response } from "./exchange.ts";
export type { RequestBody } from "./upload.ts";
