/**
 * The DIMSE listener: a TCP (or TLS) server on one address whose every connection becomes a
 * DimseConnection handed to `onConnection`. Closing stops accepting and, unless told to let them
 * finish, destroys the live associations.
 */
import net from "node:net";
import tls from "node:tls";
import { type ConnectionTimeouts, DimseConnection } from "./connection.ts";

/** Where and how to listen. */
export interface ListenOptions {
  hostname: string;
  port: number;
  /** TLS server material (PEM); absent: plain TCP. */
  tls?: { cert: string; key: string; ca?: string; requestCert?: boolean };
  timeouts?: ConnectionTimeouts;
  onConnection(conn: DimseConnection, remote: { address?: string; port?: number }): void;
}

/** A bound DIMSE listener. */
export class DimseListener {
  readonly #server: net.Server;
  readonly #live: Set<DimseConnection>;
  readonly hostname: string;
  readonly port: number;

  private constructor(
    server: net.Server,
    live: Set<DimseConnection>,
    hostname: string,
    port: number,
  ) {
    this.#server = server;
    this.#live = live;
    this.hostname = hostname;
    this.port = port;
  }

  /** Bind and start accepting; rejects when the address is taken. */
  static listen(opts: ListenOptions): Promise<DimseListener> {
    const live = new Set<DimseConnection>();
    const onSocket = (socket: net.Socket) => {
      socket.setNoDelay(true);
      const conn = new DimseConnection(socket, opts.timeouts);
      // The library marks a connection live once connected; an accepted socket already is.
      (conn as unknown as { connected: boolean }).connected = true;
      (conn as unknown as { connectedTime: number }).connectedTime = Date.now();
      live.add(conn);
      socket.once("close", () => live.delete(conn));
      opts.onConnection(conn, { address: socket.remoteAddress, port: socket.remotePort });
    };
    const server = opts.tls
      ? tls.createServer({
        cert: opts.tls.cert,
        key: opts.tls.key,
        ca: opts.tls.ca,
        requestCert: opts.tls.requestCert ?? false,
      }, onSocket)
      : net.createServer(onSocket);
    return new Promise((resolve, reject) => {
      server.once("error", reject);
      server.listen({ host: opts.hostname, port: opts.port }, () => {
        server.off("error", reject);
        const addr = server.address() as net.AddressInfo;
        resolve(new DimseListener(server, live, opts.hostname, addr.port));
      });
    });
  }

  /** Associations currently open. */
  get connections(): number {
    return this.#live.size;
  }

  /** Stop accepting; `drain` lets open associations finish, else they are destroyed. */
  async close(drain = false): Promise<void> {
    const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()));
    if (!drain) { for (const c of this.#live) c.socket.destroy(); }
    await closed;
  }
}
