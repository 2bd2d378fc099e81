/**
 * The MLLP listener: a TCP (or TLS, node:tls for client certificates) server on one address whose
 * every connection is served by an {@link MllpConnection}. Connections over `maxConnections` are
 * closed as they arrive. Closing stops accepting and, unless told to let them finish, ends the
 * live connections.
 */
import net from "node:net";
import tls from "node:tls";
import { MllpConnection, type MllpConnectionOptions, type MllpHandler } from "./connection.ts";

/** MLLP over TLS: the listener's material (PEM); with `clientCa`, peers need its certificate. */
export interface MllpTlsServer {
  cert: string;
  key: string;
  clientCa?: string;
}

/** Where and how to listen. */
export interface MllpListenOptions extends MllpConnectionOptions {
  hostname: string;
  port: number;
  maxConnections: number;
  tls?: MllpTlsServer;
  /** The handler of a new connection; undefined refuses it (closed at once). */
  onConnection(remote: { address?: string; port?: number }): MllpHandler | undefined;
  /** A connection refused because `maxConnections` are open. */
  onRefused?(address: string | undefined, open: number): void;
  /** A TLS handshake failed or a client certificate was refused (the connection is closed). */
  onTlsError?(err: Error, address: string | undefined): void;
}

/** A bound MLLP listener. */
export class MllpListener {
  readonly #server: net.Server;
  readonly #live = new Set<MllpConnection>();
  #idle: (() => void)[] = [];
  readonly hostname: string;
  readonly port: number;

  private constructor(server: net.Server, hostname: string, port: number) {
    this.#server = server;
    this.hostname = hostname;
    this.port = port;
  }

  /** Bind and start accepting; rejects when the address is taken. */
  static listen(opts: MllpListenOptions): Promise<MllpListener> {
    let listener: MllpListener | undefined;
    const onSocket = (socket: net.Socket) => {
      const live = listener!.#live;
      if (live.size >= opts.maxConnections) {
        opts.onRefused?.(socket.remoteAddress, live.size);
        socket.destroy();
        return;
      }
      const handler = opts.onConnection({
        address: socket.remoteAddress,
        port: socket.remotePort,
      });
      if (!handler) {
        socket.destroy();
        return;
      }
      const conn = new MllpConnection(socket, handler, opts);
      live.add(conn);
      socket.once("close", () => {
        live.delete(conn);
        if (live.size === 0) { for (const f of listener!.#idle.splice(0)) f(); }
      });
    };
    let server: net.Server;
    if (opts.tls) {
      const t = opts.tls;
      server = tls.createServer({
        allowHalfOpen: true,
        cert: t.cert,
        key: t.key,
        ca: t.clientCa,
        requestCert: t.clientCa !== undefined,
        // Checked here rather than in the handshake, so the refusal is logged with its reason.
        rejectUnauthorized: false,
      }, (socket) => {
        if (t.clientCa !== undefined && !socket.authorized) {
          const why = socket.authorizationError
            ? String(socket.authorizationError)
            : "no client certificate";
          opts.onTlsError?.(new Error(`client certificate refused: ${why}`), socket.remoteAddress);
          socket.destroy();
          return;
        }
        onSocket(socket);
      });
      server.on("tlsClientError", (err: Error, socket: net.Socket) => {
        opts.onTlsError?.(err, socket.remoteAddress);
        socket.destroy();
      });
    } else {
      // Half-open: a sender that shuts its side after its message (`nc -N`) still gets the ACK.
      server = net.createServer({ allowHalfOpen: true }, onSocket);
    }
    return new Promise((resolve, reject) => {
      server.once("error", reject);
      server.listen({ host: opts.hostname, port: opts.port }, () => {
        server.off("error", reject);
        const addr = server.address() as net.AddressInfo;
        listener = new MllpListener(server, opts.hostname, addr.port);
        resolve(listener);
      });
    });
  }

  /** Connections currently open. */
  get connections(): number {
    return this.#live.size;
  }

  /** Stop accepting now; open connections go on. */
  stopAccepting(): Promise<void> {
    return new Promise((done) => this.#server.close(() => done()));
  }

  /**
   * Stop accepting; `drain` lets open connections finish the message in hand (idle ones are
   * closed at once), else they are closed now.
   */
  async close(drain = false): Promise<void> {
    const stopped = this.stopAccepting();
    for (const c of this.#live) {
      if (drain) c.closeWhenIdle();
      else c.close();
    }
    await stopped;
    if (this.#live.size === 0) return;
    await new Promise<void>((resolve) => this.#idle.push(resolve));
  }
}
