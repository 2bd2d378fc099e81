/**
 * A TCP (or TLS) listener that guards an HTTP server against slow and greedy clients, for the
 * runtime's `Deno.serve`, which has no header, body or idle timeouts and no connection limits
 * (a client sending one header line every few seconds keeps its connection for ever).
 *
 * The guard accepts connections itself and relays each to the real server, which listens on an
 * ephemeral loopback port. Per connection it enforces:
 *
 * - a cap on open connections per client address (`maxConnectionsPerIp`; more are closed at once);
 * - the header timeout: the first request's head (up to the blank line) must arrive within
 *   `headerTimeoutMs`, or for HTTP/2 the connection preface (with `passthrough`, for a TLS
 *   server, the client's first bytes);
 * - the idle timeout: a connection with no byte in either direction for `idleTimeoutMs` is closed
 *   (a keep-alive connection between requests, a client that stopped sending its body, a stalled
 *   download).
 *
 * The server learns each request's real client address through {@link GuardedListener.clientOf},
 * keyed by the relay's local port, which is the server's view of the remote port, and a signal
 * that aborts when the client goes away. One signal per connection, made when first asked for:
 * the runtime's `Request.signal` costs an object graph and an abort (with a DOMException) on
 * every request that touched it, about 4.5 KB of garbage per proxied request.
 */

import { AddressCounts } from "./address_counts.ts";

/** Limits of a guarded listener. */
export interface GuardOptions {
  /** Time for the first request head (or HTTP/2 preface), ms. */
  headerTimeoutMs: number;
  /** Time without a byte in either direction before the connection is closed, ms. */
  idleTimeoutMs: number;
  /** Open connections allowed from one client address. */
  maxConnectionsPerIp: number;
}

/** Where the public side listens. */
export interface GuardedListenOptions extends GuardOptions {
  hostname: string;
  port: number;
  /**
   * The server speaks TLS itself: bytes pass through unread, and the header timeout only asks
   * for the client's first bytes (its TLS hello); the request heads inside are the server's.
   */
  passthrough?: boolean;
  /** SO_REUSEPORT on the public socket (a reload binds the same port before the old one closes). */
  reusePort?: boolean;
  /**
   * The per-address counts (AddressCounts) shared with the other listeners of the same port in
   * other threads, so that `maxConnectionsPerIp` holds across them; default: this listener's own.
   */
  addressCounts?: SharedArrayBuffer;
}

/** A client address as the server should see it. */
export interface ClientAddr {
  hostname: string;
  port: number;
}

/** One relayed client connection: its address and a signal for its end. */
export class ClientConnection {
  /** The address, shaped as the server's `remoteAddr`. */
  readonly addr: Deno.NetAddr;
  #controller: AbortController | undefined;
  #gone = false;

  constructor(hostname: string, port: number) {
    this.addr = { transport: "tcp", hostname, port };
  }

  /** Aborts when the client closed or broke its connection (made on first use). */
  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#gone) this.#controller.abort(clientGone());
    }
    return this.#controller.signal;
  }

  /** The client went away. */
  gone(): void {
    if (this.#gone) return;
    this.#gone = true;
    this.#controller?.abort(clientGone());
  }
}

function clientGone(): DOMException {
  return new DOMException("the client closed the connection", "AbortError");
}

const H2_PREFACE = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
const HEAD_END = [13, 10, 13, 10];
/** Largest first request head accepted before the relay starts (bytes). */
const MAX_HEAD_BYTES = 64 * 1024;

/** Index just after the first `\r\n\r\n` in `chunks` (concatenated), or -1. */
function headEnd(buffer: Uint8Array, length: number): number {
  let matched = 0;
  for (let i = 0; i < length; i++) {
    matched = buffer[i] === HEAD_END[matched] ? matched + 1 : buffer[i] === 13 ? 1 : 0;
    if (matched === 4) return i + 1;
  }
  return -1;
}

/** The guard in front of one server. */
export class GuardedListener {
  readonly #listener: Deno.Listener;
  readonly #options: GuardedListenOptions;
  readonly #perIp: AddressCounts;
  readonly #clients = new Map<number, ClientConnection>();
  readonly #open = new Set<Deno.Conn>();
  readonly #serving = new Set<Promise<void>>();
  #targetPort = 0;
  #closed = false;

  constructor(options: GuardedListenOptions) {
    this.#options = options;
    this.#perIp = new AddressCounts(options.addressCounts);
    this.#listener = Deno.listen({
      hostname: options.hostname,
      port: options.port,
      reusePort: options.reusePort,
    });
  }

  /** The public address. */
  get addr(): Deno.NetAddr {
    return this.#listener.addr as Deno.NetAddr;
  }

  /** Starts relaying to the server on loopback `targetPort`. */
  start(targetPort: number): void {
    this.#targetPort = targetPort;
    void this.#acceptLoop();
  }

  /** The real client of the server-side connection whose remote port is `port`. */
  clientOf(port: number): ClientConnection | undefined {
    return this.#clients.get(port);
  }

  /** Stops accepting; open connections are left to finish (or to their timeouts). */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    try {
      this.#listener.close();
    } catch {
      // already closed
    }
  }

  /** Closes every open client connection as well. */
  closeAll(): void {
    this.close();
    for (const c of this.#open) {
      try {
        c.close();
      } catch {
        // closed meanwhile
      }
    }
  }

  async #acceptLoop(): Promise<void> {
    while (!this.#closed) {
      let conn: Deno.Conn;
      try {
        conn = await this.#listener.accept();
      } catch {
        if (this.#closed) return;
        continue;
      }
      const serving = this.#serve(conn);
      this.#serving.add(serving);
      void serving.finally(() => this.#serving.delete(serving));
    }
  }

  /**
   * Waits (at most `ms`) for the open connections to end by themselves: after the server has
   * answered its last request, the relay still has to hand the answer to the client.
   */
  async drain(ms: number): Promise<void> {
    if (this.#serving.size === 0) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      Promise.allSettled([...this.#serving]),
      new Promise((r) => timer = setTimeout(r, ms)),
    ]);
    clearTimeout(timer);
  }

  async #serve(conn: Deno.Conn): Promise<void> {
    const remote = conn.remoteAddr as Deno.NetAddr;
    const ip = remote.hostname;
    const admission = this.#perIp.acquire(ip, this.#options.maxConnectionsPerIp);
    if (admission === "refused") {
      try {
        conn.close();
      } catch {
        // gone
      }
      return;
    }
    this.#open.add(conn);
    let upstream: Deno.TcpConn | undefined;
    try {
      const head = await this.#readHead(conn);
      if (head === null) return;
      upstream = await Deno.connect({ hostname: "127.0.0.1", port: this.#targetPort });
      upstream.setNoDelay(true);
      const localPort = (upstream.localAddr as Deno.NetAddr).port;
      const client = new ClientConnection(ip, remote.port);
      this.#clients.set(localPort, client);
      try {
        await writeAll(upstream, head);
        await this.#relay(conn, upstream, client);
      } finally {
        client.gone();
        this.#clients.delete(localPort);
      }
    } catch {
      // a broken connection on either side ends the relay
    } finally {
      for (const c of [conn, upstream]) {
        try {
          c?.close();
        } catch {
          // closed already
        }
      }
      this.#open.delete(conn);
      if (admission === "counted") this.#perIp.release(ip);
    }
  }

  /**
   * The bytes of the first request head (or HTTP/2 preface) read within the header timeout, or
   * null when the client was too slow, sent too much, or went away.
   */
  async #readHead(conn: Deno.Conn): Promise<Uint8Array | null> {
    const buffer = new Uint8Array(MAX_HEAD_BYTES);
    let length = 0;
    const timer = setTimeout(() => {
      try {
        conn.close();
      } catch {
        // gone
      }
    }, this.#options.headerTimeoutMs);
    try {
      while (length < MAX_HEAD_BYTES) {
        const n = await conn.read(buffer.subarray(length));
        if (n === null) return null;
        length += n;
        if (this.#options.passthrough) return buffer.slice(0, length);
        if (length >= H2_PREFACE.length && isH2Preface(buffer)) return buffer.slice(0, length);
        if (headEnd(buffer, length) >= 0) return buffer.slice(0, length);
      }
      return null;
    } catch {
      return null;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Copies both ways until either side ends or nothing moves for the idle timeout. */
  async #relay(client: Deno.Conn, server: Deno.Conn, connection: ClientConnection): Promise<void> {
    let last = Date.now();
    const idle = this.#options.idleTimeoutMs;
    let done = false;
    const check = setInterval(() => {
      if (Date.now() - last > idle) {
        done = true;
        try {
          client.close();
        } catch {
          // gone
        }
        try {
          server.close();
        } catch {
          // gone
        }
      }
    }, Math.min(1000, Math.max(50, idle / 4)));
    const pump = async (from: Deno.Conn, to: Deno.Conn) => {
      const buf = new Uint8Array(16 * 1024);
      try {
        while (!done) {
          const n = await from.read(buf);
          if (n === null) break;
          last = Date.now();
          await writeAll(to, buf.subarray(0, n));
          last = Date.now();
        }
      } finally {
        // Half-close: tell the other side there is no more to read.
        try {
          if ("closeWrite" in to) await (to as Deno.TcpConn).closeWrite();
        } catch {
          // closed
        }
      }
    };
    try {
      // Both directions run to their end (a side that stops sending half-closes the other). The
      // client's side ending is the client going away: work for it in flight can stop.
      await Promise.all([
        pump(client, server).finally(() => connection.gone()),
        pump(server, client),
      ]);
    } finally {
      clearInterval(check);
    }
  }
}

function isH2Preface(buffer: Uint8Array): boolean {
  for (let i = 0; i < H2_PREFACE.length; i++) {
    if (buffer[i] !== H2_PREFACE.charCodeAt(i)) return false;
  }
  return true;
}

async function writeAll(conn: Deno.Conn, bytes: Uint8Array): Promise<void> {
  let offset = 0;
  while (offset < bytes.byteLength) offset += await conn.write(bytes.subarray(offset));
}

/** What a handler of the guarded server sees: the client's real address and its signal. */
export class GuardedServeInfo implements Deno.ServeHandlerInfo<Deno.NetAddr> {
  readonly #info: Deno.ServeHandlerInfo<Deno.NetAddr>;
  readonly remoteAddr: Deno.NetAddr;
  /** The relayed connection (its signal aborts when the client goes away). */
  readonly client: ClientConnection;

  constructor(info: Deno.ServeHandlerInfo<Deno.NetAddr>, client: ClientConnection) {
    this.#info = info;
    this.remoteAddr = client.addr;
    this.client = client;
  }

  get completed(): Promise<void> {
    return this.#info.completed;
  }
}

/** Fills in what a request handler of the guarded server needs: the client's real address. */
export function clientInfo(
  guard: GuardedListener,
  info: Deno.ServeHandlerInfo<Deno.NetAddr>,
): Deno.ServeHandlerInfo<Deno.NetAddr> {
  const client = guard.clientOf(info.remoteAddr.port);
  return client ? new GuardedServeInfo(info, client) : info;
}

/** The signal of a request's client connection when a guard relays it, else undefined. */
export function clientSignalOf(info: Deno.ServeHandlerInfo<Deno.NetAddr>): AbortSignal | undefined {
  return info instanceof GuardedServeInfo ? info.client.signal : undefined;
}
