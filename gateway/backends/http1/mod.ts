/**
 * A pooled HTTP/1.1 client over `Deno.connect` / `Deno.connectTls` for the `http` backend:
 * keep-alive reuse, streamed bodies with backpressure, and the stale-connection retry.
 * See docs/decisions.md ("HTTP upstream client") for why it replaces `fetch`.
 *
 * @example
 * ```ts
 * import { Http1Client } from "./mod.ts";
 *
 * const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, () => new Response("ok"));
 * const client = new Http1Client();
 * const res = await client.request(new URL(`http://127.0.0.1:${server.addr.port}/`), {
 *   method: "GET",
 *   headers: new Headers(),
 *   body: null,
 * });
 * console.log(res.status, await res.text()); // 200 ok
 * await client.close();
 * await server.shutdown();
 * ```
 *
 * @module
 */

export { Http1Client, type Http1ClientOptions, type Http1ClientStats } from "./client.ts";
export type { AbortHook, AbortListener, HeaderSource, Http1RequestInit } from "./request.ts";
export { Http1Error, type Http1ErrorCode } from "./errors.ts";
export type { Http1Response } from "./exchange.ts";
export type { RequestBody } from "./upload.ts";
