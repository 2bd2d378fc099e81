/**
 * HTTP served by a {@link GuardedListener}: `Deno.serve`'s server for every connection, behind
 * header and idle timeouts and a per-address connection cap.
 */
import {
  clientOf as clientOfInfo,
  GuardedListener,
  type GuardOptions,
} from "./guarded_listener.ts";
import type { RuntimeHttp } from "./deno_internals.ts";
import type { Clock } from "../clock.ts";

/** Defaults: a first request within 10 s, 120 s without activity, 256 connections per address. */
export const DEFAULT_GUARD: GuardOptions = {
  headerTimeoutMs: 10_000,
  idleTimeoutMs: 120_000,
  maxConnectionsPerIp: 256,
};

/** The running server, shaped like the part of `Deno.HttpServer` the callers use. */
export interface GuardedServer {
  /** The address it listens on. */
  readonly addr: Deno.NetAddr;
  /**
   * Stops accepting, lets requests in flight finish, then closes what is left; after `graceMs`
   * (default: no limit) it closes what it can at once and resolves.
   */
  shutdown(graceMs?: number): Promise<void>;
}

/** Options of {@link guardedServe}. */
export interface GuardedServeOptions {
  hostname: string;
  port: number;
  /** Serve TLS (h2 or http/1.1 by ALPN) with this certificate and key (PEM). */
  tls?: { cert: string; key: string };
  reusePort?: boolean;
  guard: GuardOptions;
  /** Per-address counts shared with the same port's listeners in other threads. */
  addressCounts?: SharedArrayBuffer;
  onError?: (err: unknown) => Response | Promise<Response>;
  /**
   * Track every streamed response body, so that a long download that keeps moving is not idle
   * (default true). The gateway's data plane sets it off and tracks the bodies it streams
   * itself (`ClientConnection.track`), which spares the responses it answers from memory.
   */
  trackResponseBodies?: boolean;
  /**
   * The runtime's per-connection HTTP server (default: the runtime's, self-tested once per
   * isolate); `Promise.resolve(undefined)` forces the relay fallback (tests).
   */
  runtimeHttp?: Promise<RuntimeHttp | undefined>;
  /** The time of the guard's deadlines (default: the system clock; tests pass a `ManualClock`). */
  clock?: Clock;
}

function internalError(err: unknown): Response {
  console.error("unhandled error in an HTTP handler", err);
  return new Response("Internal Server Error", { status: 500 });
}

/** Serves `handler` behind the guard. */
export function guardedServe(
  options: GuardedServeOptions,
  handler: Deno.ServeHandler<Deno.NetAddr>,
): GuardedServer {
  const listener = new GuardedListener({
    hostname: options.hostname,
    port: options.port,
    reusePort: options.reusePort,
    tls: options.tls,
    addressCounts: options.addressCounts,
    runtimeHttp: options.runtimeHttp,
    clock: options.clock,
    ...options.guard,
  });
  const serve: Deno.ServeHandler<Deno.NetAddr> = options.trackResponseBodies === false
    ? handler
    : async (req, info) => {
      const res = await handler(req, info);
      const client = clientOfInfo(info);
      // A streamed body (an event stream, a download) keeps the connection active as it moves.
      return client && res.body && !res.bodyUsed ? new Response(client.track(res.body), res) : res;
    };
  listener.serve(serve, options.onError ?? internalError);
  return { addr: listener.addr, shutdown: (graceMs) => listener.shutdown(graceMs) };
}
