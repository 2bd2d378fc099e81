/**
 * The HTTP/3 adapter: for a network with `[network.<name>.http3]`, a QUIC listener that hands
 * every request to the same handler as the network's HTTP listener (so the same endpoints and
 * pipelines serve it). The HTTP/1.1 and HTTP/2 listener advertises it with `Alt-Svc`.
 */
import type { Http3ListenerConfig, NetworkConfig } from "../../shared/gateway_config/mod.ts";
import { Http3Server } from "../http3/mod.ts";

/** Handles one request of a network; the same signature as the HTTP listener's handler. */
export type Http3NetworkHandler = (
  request: Request,
  info: Deno.ServeHandlerInfo<Deno.NetAddr>,
) => Response | Promise<Response>;

/** A running HTTP/3 listener and what identifies its settings. */
export interface Http3Listener {
  readonly key: string;
  readonly network: string;
  readonly config: Http3ListenerConfig;
  readonly server: Http3Server;
  readonly port: number;
}

/** Certificate and key of an HTTP/3 listener, read from their files. */
export interface Http3Material {
  cert: string;
  key: string;
}

/** Read the certificate and key of a network's HTTP/3 listener, when it has one. */
export async function readHttp3Tls(net: NetworkConfig): Promise<Http3Material | undefined> {
  if (!net.http3) return undefined;
  return {
    cert: await Deno.readTextFile(net.http3.cert_path),
    key: await Deno.readTextFile(net.http3.key_path),
  };
}

/** A key that changes whenever the HTTP/3 listener must be replaced (address, port, files). */
export function http3ListenerKey(net: NetworkConfig, m: Http3Material): string {
  const h = net.http3!;
  return JSON.stringify([net.name, h.bind, h.port, m.cert, m.key]);
}

/** The `Alt-Svc` value advertising an HTTP/3 listener on `port` (RFC 7838, RFC 9114 §3.1.1). */
export function altSvcValue(port: number): string {
  return `h3=":${port}"; ma=86400`;
}

/** Add `Alt-Svc` to a response (copying it when its headers are immutable). */
export function withAltSvc(response: Response, value: string): Response {
  try {
    response.headers.set("alt-svc", value);
    return response;
  } catch {
    const copy = new Response(response.body, response);
    copy.headers.set("alt-svc", value);
    return copy;
  }
}

/** Fail early with a clear message when the UDP port is taken by another process. */
export function assertUdpPortFree(bind: string, port: number, what: string): void {
  try {
    Deno.listenDatagram({ hostname: bind, port, transport: "udp" }).close();
  } catch (err) {
    throw new Error(`${what}: cannot listen on ${bind}:${port}/udp: ${(err as Error).message}`, {
      cause: err,
    });
  }
}

/** Check that a certificate and key load, without touching a running listener. */
export function checkHttp3Material(m: Http3Material, what: string): void {
  const probe = new Deno.QuicEndpoint({ hostname: "127.0.0.1", port: 0 });
  try {
    probe.listen({ cert: m.cert, key: m.key, alpnProtocols: ["h3"] }).stop();
  } catch (err) {
    throw new Error(`${what}: invalid certificate or key: ${(err as Error).message}`, {
      cause: err,
    });
  } finally {
    probe.close();
  }
}

/**
 * Start the HTTP/3 listener of a network. `previous`, a listener on the same address being
 * replaced (new certificate), hands over its UDP socket: its connections drain on it while new
 * connections get the new certificate.
 */
export function serveHttp3(
  net: NetworkConfig,
  material: Http3Material,
  handler: Http3NetworkHandler,
  onError: (err: unknown, where: string) => void,
  previous?: Http3Listener,
): Http3Listener {
  const h = net.http3!;
  const server = new Http3Server({
    hostname: h.bind,
    port: h.port,
    cert: material.cert,
    key: material.key,
    endpoint: previous?.server.handOver(),
    onError,
    handler: (request, info) =>
      handler(request, {
        remoteAddr: {
          transport: "udp",
          hostname: info.remoteAddr.hostname,
          port: info.remoteAddr.port,
        },
        completed: Promise.resolve(),
      } as unknown as Deno.ServeHandlerInfo<Deno.NetAddr>),
  });
  previous?.server.forwardTo(server);
  return {
    key: http3ListenerKey(net, material),
    network: net.name,
    config: h,
    server,
    port: server.addr.port,
  };
}
