/**
 * The HTTP adapter: one `Deno.serve` listener per network. Cleartext listeners speak HTTP/1.1 and
 * HTTP/2 with prior knowledge (h2c); TLS listeners negotiate h2 or http/1.1 with ALPN.
 */
import type { NetworkConfig } from "../../shared/gateway_config/mod.ts";
import { DEFAULT_GUARD, guardedServe, type GuardOptions } from "../../shared/net/mod.ts";

/** Handles one request that arrived on a network. */
export type NetworkHandler = (
  request: Request,
  info: Deno.ServeHandlerInfo<Deno.NetAddr>,
  tls: boolean,
) => Response | Promise<Response>;

/** What the runtime needs of a running server: its address, and a graceful stop. */
export interface ListenerServer {
  readonly addr: Deno.NetAddr;
  /** Stops accepting and drains; the guarded server stops waiting after `graceMs`. */
  shutdown(graceMs?: number): Promise<void>;
}

/** A running listener and what identifies its socket settings. */
export interface HttpListener {
  readonly key: string;
  readonly network: string;
  readonly server: ListenerServer;
  readonly port: number;
}

/** The slow-client guard of a network (shared/net): its limits, or undefined when it is off. */
export function guardOf(net: NetworkConfig): GuardOptions | undefined {
  if (net.connection_guard === false) return undefined;
  return {
    headerTimeoutMs: (net.header_timeout_secs ?? DEFAULT_GUARD.headerTimeoutMs / 1000) * 1000,
    idleTimeoutMs: (net.idle_timeout_secs ?? DEFAULT_GUARD.idleTimeoutMs / 1000) * 1000,
    maxConnectionsPerIp: net.max_connections_per_ip ?? DEFAULT_GUARD.maxConnectionsPerIp,
  };
}

/** Certificate material of a TLS network, read from its files. */
export interface TlsMaterial {
  cert: string;
  key: string;
}

/** Read the certificate and key of a network, when it has them. */
export async function readTls(net: NetworkConfig): Promise<TlsMaterial | undefined> {
  if (!net.tls_cert_path || !net.tls_key_path) return undefined;
  return {
    cert: await Deno.readTextFile(net.tls_cert_path),
    key: await Deno.readTextFile(net.tls_key_path),
  };
}

/**
 * A key that changes whenever the listener must be restarted (address, port, certificate).
 * A certificate rotation therefore starts a new listener on reload.
 */
export function listenerKey(net: NetworkConfig, tls: TlsMaterial | undefined): string {
  return JSON.stringify([
    net.name,
    net.bind,
    net.port,
    tls?.cert ?? "",
    tls?.key ?? "",
    guardOf(net) ?? null,
  ]);
}

/**
 * Fail early with a clear message when the port is taken by another process. Listeners use
 * `reusePort` so a reload can start a replacement before closing the old one; without this check
 * a second gateway could silently share the port.
 */
export function assertPortFree(bind: string, port: number, what: string): void {
  try {
    const l = Deno.listen({ hostname: bind, port });
    l.close();
  } catch (err) {
    throw new Error(`${what}: cannot listen on ${bind}:${port}: ${(err as Error).message}`, {
      cause: err,
    });
  }
}

/** Start the listener of a network. */
export function serveNetwork(
  net: NetworkConfig,
  tls: TlsMaterial | undefined,
  handler: NetworkHandler,
  onError: (err: unknown) => Response,
  /** Per-address connection counts shared with the same port's listeners in other workers. */
  addressCounts?: SharedArrayBuffer,
): HttpListener {
  const secure = tls !== undefined;
  const guard = guardOf(net);
  if (guard) {
    // Deno.serve has no header or idle timeouts and no connection cap: the guarded listener
    // accepts the connections and gives each to the runtime's server itself
    // (shared/net/guarded_listener.ts). The endpoints track the bodies they stream.
    const server = guardedServe(
      {
        hostname: net.bind,
        port: net.port,
        reusePort: true,
        tls,
        guard,
        onError,
        addressCounts,
        trackResponseBodies: false,
      },
      (req, info) => handler(req, info, secure),
    );
    return { key: listenerKey(net, tls), network: net.name, server, port: server.addr.port };
  }
  const options = {
    hostname: net.bind,
    port: net.port,
    reusePort: true,
    onListen: () => {},
    onError,
    ...(tls ? { cert: tls.cert, key: tls.key } : {}),
  };
  const server = Deno.serve(
    options as Deno.ServeTcpOptions,
    (req, info) => handler(req, info as Deno.ServeHandlerInfo<Deno.NetAddr>, secure),
  ) as Deno.HttpServer<Deno.NetAddr>;
  return { key: listenerKey(net, tls), network: net.name, server, port: server.addr.port };
}
