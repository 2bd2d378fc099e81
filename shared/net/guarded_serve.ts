/**
 * `Deno.serve` behind a {@link GuardedListener}: the server listens on an ephemeral loopback
 * port, the guard on the public address, and handlers see the client's real address.
 */
import { clientInfo, GuardedListener, type GuardOptions } from "./guarded_listener.ts";

/** Defaults: a request head within 10 s, 120 s without a byte, 256 connections per address. */
export const DEFAULT_GUARD: GuardOptions = {
  headerTimeoutMs: 10_000,
  idleTimeoutMs: 120_000,
  maxConnectionsPerIp: 256,
};

/** The running pair, shaped like the part of `Deno.HttpServer` the callers use. */
export interface GuardedServer {
  /** The public address. */
  readonly addr: Deno.NetAddr;
  /** Stops accepting, lets requests in flight finish, then closes what is left. */
  shutdown(): Promise<void>;
}

/** Options of {@link guardedServe}. */
export interface GuardedServeOptions {
  hostname: string;
  port: number;
  /** TLS is served by the inner server; the guard passes the bytes through. */
  tls?: { cert: string; key: string };
  reusePort?: boolean;
  guard: GuardOptions;
  /** Per-address counts shared with the same port's listeners in other threads. */
  addressCounts?: SharedArrayBuffer;
  onError?: (err: unknown) => Response | Promise<Response>;
}

/** Serves `handler` behind the guard. */
export function guardedServe(
  options: GuardedServeOptions,
  handler: Deno.ServeHandler<Deno.NetAddr>,
): GuardedServer {
  const front = new GuardedListener({
    hostname: options.hostname,
    port: options.port,
    reusePort: options.reusePort,
    passthrough: options.tls !== undefined,
    addressCounts: options.addressCounts,
    ...options.guard,
  });
  let inner: Deno.HttpServer<Deno.NetAddr>;
  try {
    inner = Deno.serve({
      hostname: "127.0.0.1",
      port: 0,
      onListen: () => {},
      ...(options.onError ? { onError: options.onError } : {}),
      ...(options.tls ?? {}),
    }, (req, info) => handler(req, clientInfo(front, info))) as Deno.HttpServer<Deno.NetAddr>;
  } catch (err) {
    front.close();
    throw err;
  }
  front.start(inner.addr.port);
  return {
    addr: front.addr,
    shutdown: async () => {
      front.close();
      await inner.shutdown();
      // The inner server has answered and closed its side: let the relays deliver the last
      // bytes, then close whatever is still open.
      await front.drain(2_000);
      front.closeAll();
    },
  };
}
