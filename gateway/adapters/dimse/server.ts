/**
 * The DIMSE listener: a TCP (or TLS) server on one address whose every connection becomes a
 * DimseConnection handed to `onConnection`. Plain TCP is Deno's own listener with TcpSocket (one
 * reused read buffer per connection); TLS is node:tls (client certificates). Closing stops
 * accepting and, unless told to let them finish, destroys the live associations.
 */
import type net from "node:net";
import tls from "node:tls";
import { type ConnectionTimeouts, DimseConnection, type DimseSocket } from "./connection.ts";
import { TcpSocket } from "./tcp_socket.ts";
import { type PeerCertificate, pemCertificates, refusalReason } from "./client_cert.ts";

/** Where and how to listen. */
export interface ListenOptions {
  hostname: string;
  port: number;
  /** TLS server material; absent: plain TCP. */
  tls?: DimseTlsServer;
  timeouts?: ConnectionTimeouts;
  onConnection(conn: DimseConnection, remote: { address?: string; port?: number }): void;
  /** A TLS handshake failed (the connection is closed). */
  onTlsError?(err: Error, address: string | undefined): void;
}

/**
 * A DIMSE TLS listener's material (PEM). With `clientCa`, every peer must present a certificate
 * issued by one of those CAs: the handshake fails without one.
 */
export interface DimseTlsServer {
  cert: string;
  key: string;
  clientCa?: string;
}

/** Live connections of a listener; resolves `idle` waiters when the last one closes. */
class LiveSet {
  readonly conns = new Set<DimseConnection>();
  #idle: (() => void)[] = [];

  add(conn: DimseConnection, socket: DimseSocket): void {
    this.conns.add(conn);
    socket.once("close", () => {
      this.conns.delete(conn);
      if (this.conns.size === 0) { for (const f of this.#idle.splice(0)) f(); }
    });
  }

  /** Resolves once no connection is open. */
  idle(): Promise<void> {
    if (this.conns.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }
}

/** A bound DIMSE listener. */
export class DimseListener {
  readonly #stop: () => Promise<void>;
  readonly #live: LiveSet;
  readonly hostname: string;
  readonly port: number;

  private constructor(stop: () => Promise<void>, live: LiveSet, hostname: string, port: number) {
    this.#stop = stop;
    this.#live = live;
    this.hostname = hostname;
    this.port = port;
  }

  /** Bind and start accepting; rejects when the address is taken. */
  static listen(opts: ListenOptions): Promise<DimseListener> {
    const live = new LiveSet();
    const onSocket = (socket: DimseSocket) => {
      socket.setNoDelay(true);
      const conn = new DimseConnection(socket, opts.timeouts);
      live.add(conn, socket);
      opts.onConnection(conn, { address: socket.remoteAddress, port: socket.remotePort });
    };
    return opts.tls
      ? DimseListener.#tls(opts, live, onSocket)
      : DimseListener.#tcp(opts, live, onSocket);
  }

  /** Associations currently open. */
  get connections(): number {
    return this.#live.conns.size;
  }

  /**
   * Stop accepting now; open associations go on, and `close` waits for them later. (A listener
   * restarted with new TLS material frees its port this way.)
   */
  async stopAccepting(): Promise<void> {
    await this.#stop();
  }

  /** Stop accepting; `drain` lets open associations finish, else they are destroyed. */
  async close(drain = false): Promise<void> {
    const stopped = this.#stop();
    if (!drain) { for (const c of this.#live.conns) c.socket.destroy(); }
    await stopped;
    await this.#live.idle();
  }

  static #tcp(
    opts: ListenOptions,
    live: LiveSet,
    onSocket: (s: DimseSocket) => void,
  ): Promise<DimseListener> {
    let listener: Deno.TcpListener;
    try {
      listener = Deno.listen({ hostname: opts.hostname, port: opts.port, transport: "tcp" });
    } catch (err) {
      return Promise.reject(err);
    }
    const accepting = (async () => {
      try {
        for await (const conn of listener) onSocket(new TcpSocket(conn));
      } catch {
        // closed
      }
    })();
    const stop = async () => {
      try {
        listener.close();
      } catch {
        // already closed
      }
      await accepting;
    };
    const port = (listener.addr as Deno.NetAddr).port;
    return Promise.resolve(new DimseListener(stop, live, opts.hostname, port));
  }

  static #tls(
    opts: ListenOptions,
    live: LiveSet,
    onSocket: (s: DimseSocket) => void,
  ): Promise<DimseListener> {
    const t = opts.tls!;
    const trusted = t.clientCa === undefined ? [] : pemCertificates(t.clientCa);
    const server = tls.createServer({
      cert: t.cert,
      key: t.key,
      ca: t.clientCa,
      requestCert: t.clientCa !== undefined,
      // Refused in the handshake, a certificate shows only as "socket hang up" (Deno's node:tls):
      // the handshake completes, and a peer whose certificate did not verify is closed here,
      // before a byte of DIMSE is read, with the reason (client_cert.ts).
      rejectUnauthorized: false,
    }, (socket) => {
      if (t.clientCa !== undefined && !socket.authorized) {
        const peer = socket.getPeerCertificate(true) as unknown as PeerCertificate;
        const code = socket.authorizationError ? String(socket.authorizationError) : undefined;
        opts.onTlsError?.(new Error(refusalReason(peer, trusted, code)), socket.remoteAddress);
        socket.destroy();
        return;
      }
      onSocket(socket as unknown as DimseSocket);
    });
    // A failed handshake (a peer that speaks plain DIMSE, no TLS) ends that connection only.
    server.on("tlsClientError", (err: Error, socket: net.Socket) => {
      opts.onTlsError?.(err, socket.remoteAddress);
      socket.destroy();
    });
    return new Promise((resolve, reject) => {
      server.once("error", reject);
      server.listen({ host: opts.hostname, port: opts.port }, () => {
        server.off("error", reject);
        const addr = server.address() as net.AddressInfo;
        const stop = () => new Promise<void>((done) => server.close(() => done()));
        resolve(new DimseListener(stop, live, opts.hostname, addr.port));
      });
    });
  }
}
