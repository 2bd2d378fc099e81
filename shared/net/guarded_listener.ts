/**
 * A TCP (or TLS) listener that serves HTTP with the limits the runtime's `Deno.serve` lacks: it
 * has no header, body or idle timeouts and no connection caps (a client sending one header line
 * every few seconds keeps its connection for ever).
 *
 * The guard accepts each connection itself and hands it to the runtime's HTTP server for that one
 * connection (`serveHttpOnConnection`, the per-connection server `Deno.serve` runs for every
 * connection it accepts): the bytes go from the socket straight to the runtime's parser, with no
 * relay and no second socket. Per connection it keeps:
 *
 * - a cap on open connections per client address (`maxConnectionsPerIp`; more are closed at once);
 * - the header timeout: the first request must have arrived (its head parsed; over TLS the
 *   handshake too) within `headerTimeoutMs` of the connection;
 * - the idle timeout: a connection is closed when, for `idleTimeoutMs`, no request started or
 *   ended on it and no tracked body moved ({@link ClientConnection.track}): an idle keep-alive
 *   connection, a slow second request head, a client that stopped sending its body or stopped
 *   reading the answer;
 * - a close after an answer, when the handler asks for it ({@link ClientConnection.closeAfterAnswer}:
 *   a body given up on, which HTTP/1.1 would otherwise go on reading after the answer).
 *
 * Its shutdown drains within a grace period, after which it closes what it still can.
 *
 * One sweep timer per listener checks the deadlines (no timer per connection or request). The
 * handler learns each request's client through {@link GuardedServeInfo}: its address (read once
 * per connection) and its {@link ClientConnection}, on which it tracks the bodies it streams. A
 * client that goes away mid-request is the runtime's to report, as ever, through
 * `Request.signal`: while a handler is pending, the runtime's server watches the socket for the
 * peer's end and aborts that signal (with `--unstable-no-legacy-abort`, only then).
 */

import { type Clock, every, systemClock } from "../clock.ts";
import { AddressCounts } from "./address_counts.ts";
import { type ConnectionServer, type RuntimeHttp, runtimeHttp } from "./deno_internals.ts";

/** Limits of a guarded listener. */
export interface GuardOptions {
  /** Time for the first request (its head, and over TLS the handshake), ms. */
  headerTimeoutMs: number;
  /** Time without a request starting or ending or a tracked body moving, ms. */
  idleTimeoutMs: number;
  /** Open connections allowed from one client address. */
  maxConnectionsPerIp: number;
}

/** Where the guarded listener listens. */
export interface GuardedListenOptions extends GuardOptions {
  hostname: string;
  port: number;
  /** Serve TLS (h2 or http/1.1 by ALPN) with this certificate and key (PEM). */
  tls?: { cert: string; key: string };
  /** SO_REUSEPORT on the socket (a reload binds the same port before the old one closes). */
  reusePort?: boolean;
  /**
   * The per-address counts (AddressCounts) shared with the other listeners of the same port in
   * other threads, so that `maxConnectionsPerIp` holds across them; default: this listener's own.
   */
  addressCounts?: SharedArrayBuffer;
  /**
   * The runtime's per-connection HTTP server (default: {@link runtimeHttp}, self-tested once per
   * isolate); `undefined` makes the listener relay every connection to a loopback `Deno.serve`.
   */
  runtimeHttp?: Promise<RuntimeHttp | undefined>;
  /**
   * The time of the deadlines: the sweep, the header and idle timeouts and the shutdown's grace
   * (default: the system clock; a test moves a `ManualClock` instead of waiting them out).
   */
  clock?: Clock;
}

/** A client address as the server should see it. */
export interface ClientAddr {
  hostname: string;
  port: number;
}

/** One client connection: its address and its activity. */
export class ClientConnection {
  /** The address, shaped as the server's `remoteAddr`. */
  readonly addr: Deno.NetAddr;
  /** Requests started on the connection. */
  requests = 0;
  /** Requests with a body whose handler has not answered yet. */
  uploads = 0;
  /** Requests whose handler has not answered yet. */
  active = 0;
  /** Set by {@link closeAfterAnswer}: the listener closes the connection once it has answered. */
  closeAsked = false;
  /** The clock's time of the last activity: accepted, a request started or ended, a body moved. */
  lastActive: number;
  readonly #clock: Clock;
  /** The tracked bodies being read: the source's reader, and the tracked stream's controller. */
  #reading:
    | Map<ReadableStreamDefaultReader<Uint8Array>, ReadableStreamDefaultController<Uint8Array>>
    | undefined;

  constructor(hostname: string, port: number, clock: Clock = systemClock) {
    this.addr = { transport: "tcp", hostname, port };
    this.#clock = clock;
    this.lastActive = clock.now();
  }

  /** Marks activity, which puts off the idle timeout. */
  touch(): void {
    this.lastActive = this.#clock.now();
  }

  /** True while a tracked body (an upload or a streamed answer) is being read. */
  get moving(): boolean {
    return this.#reading !== undefined && this.#reading.size > 0;
  }

  /**
   * Closes an HTTP/1.x connection once the answer to `request` is out: the handler gave up on
   * the request's body (a 408 for a body that trickles), and the runtime would otherwise read
   * the rest of it before closing, for as long as the client keeps sending. HTTP/2 is left
   * alone: the runtime resets that one stream once its body is let go. (HTTP/2 requests reach
   * the handler without a Host field: the runtime keeps `:authority` in the URL.)
   */
  closeAfterAnswer(request: Request): void {
    if (request.headers.has("host")) this.closeAsked = true;
  }

  /**
   * `body` as a stream that marks activity for every chunk it hands on, so that a long upload
   * or download that keeps moving is not idle, and one that stops is. Pull-based: it reads
   * nothing ahead, and the source is locked only when the first chunk is asked for. `onError`
   * (given the failure and the bytes handed on before it) says what the stream fails with
   * instead, so that a caller that watches the stream needs no second one around it.
   */
  track(
    body: ReadableStream<Uint8Array>,
    onError?: (err: unknown, sent: number) => unknown,
  ): ReadableStream<Uint8Array> {
    let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
    let sent = 0;
    return new ReadableStream<Uint8Array>({
      pull: async (controller) => {
        if (!reader) {
          reader = body.getReader();
          (this.#reading ??= new Map()).set(reader, controller);
        }
        try {
          const { done, value } = await reader.read();
          // Cut by cancelTracked: the stream has been errored, not ended.
          if (!this.#reading!.has(reader)) return;
          this.lastActive = this.#clock.now();
          if (value !== undefined) {
            sent += value.byteLength;
            controller.enqueue(value);
          }
          if (done) {
            this.#reading!.delete(reader);
            controller.close();
          }
        } catch (err) {
          this.#reading!.delete(reader);
          throw onError ? onError(err, sent) : err;
        }
      },
      cancel: (reason) => {
        if (!reader) return body.cancel(reason);
        this.#reading!.delete(reader);
        return reader.cancel(reason);
      },
    }, { highWaterMark: 0 });
  }

  /**
   * Cancels the tracked bodies still being read: the connection is being closed, and the runtime
   * keeps a request body's socket open while something reads it.
   */
  cancelTracked(): boolean {
    if (!this.#reading || this.#reading.size === 0) return false;
    const reason = new DOMException("the connection was closed", "AbortError");
    const reading = [...this.#reading];
    this.#reading.clear();
    for (const [reader, controller] of reading) {
      controller.error(reason);
      reader.cancel(reason).catch(() => {});
    }
    return true;
  }

  /** Marks the end of a request and hands its response on (one function per connection). */
  readonly ended = (response: Response): Response => {
    this.active--;
    this.lastActive = this.#clock.now();
    return response;
  };

  /** Marks the end of a failed request and rethrows. */
  readonly failed = (error: unknown): never => {
    this.active--;
    this.lastActive = this.#clock.now();
    throw error;
  };

  /** {@link ended} for a request with a body. */
  readonly uploadEnded = (response: Response): Response => {
    this.uploads--;
    return this.ended(response);
  };

  /** {@link failed} for a request with a body. */
  readonly uploadFailed = (error: unknown): never => {
    this.uploads--;
    return this.failed(error);
  };
}

/** One open connection as the listener tracks it. */
interface OpenConnection {
  readonly client: ClientConnection;
  /** The runtime's server of the connection (relayed to the fallback: that server's shutdown). */
  server?: Pick<ConnectionServer, "shutdown">;
  /**
   * The runtime server's forceful cancel of the connection, as it registers it on the abort
   * signal it is given (its own signal would report a cancel of a connection the runtime is
   * already closing as an uncaught error; called here, it throws where it can be caught).
   */
  cancel?: () => void;
  /** Closed, or being closed. */
  closing: boolean;
  /** A body of it was cut: the runtime would wait for the rest of it, so only a cancel closes it. */
  cut: boolean;
  /** Shutdown has asked the runtime's server to close it after what is in flight. */
  draining: boolean;
  /** TLS: the client's socket and the loopback one its bytes are relayed over. */
  sockets?: Deno.Conn[];
}

/**
 * Closes `open` at once: cuts the tracked bodies still moving, then cancels the connection in
 * the runtime's server. While a request with a body is in flight, cutting the body is all: a
 * cancel then would leak the socket (the runtime's request keeps it, and nothing releases the
 * request once its connection is cancelled). The handler answers with an error instead, and the
 * next sweep cancels the connection, which the runtime would otherwise keep open to read the rest
 * of the body it was announced. Over TLS the relayed sockets are closed as well (a handshake in
 * progress inside the runtime cannot be cancelled).
 */
function closeNow(open: OpenConnection, force = false): void {
  if (open.client.cancelTracked()) open.cut = true;
  if (open.closing) return;
  // Forced (a shutdown past its grace): a TLS client's socket is ours to close, body or not.
  if (force && open.sockets) {
    for (const socket of open.sockets) closeQuietly(socket);
  }
  if (open.client.uploads > 0) return;
  open.closing = true;
  try {
    open.cancel?.();
  } catch {
    // the runtime has let the connection go already
  }
  for (const socket of open.sockets ?? []) closeQuietly(socket);
}

function closeQuietly(conn: Deno.Conn | Deno.Listener): void {
  try {
    conn.close();
  } catch {
    // closed already
  }
}

const noop = () => {};

type Handler = Deno.ServeHandler<Deno.NetAddr>;
type OnError = (error: unknown) => Response | Promise<Response>;

/**
 * The guarded HTTP listener of one address. Cleartext connections go to the runtime's server
 * directly. TLS connections are relayed, still encrypted, to the runtime's TLS server on an
 * ephemeral loopback port: a TLS handshake in progress inside the runtime cannot be cancelled (its
 * socket stays open until the client finishes it), so the guard keeps the client's socket itself.
 *
 * When the runtime's per-connection server is missing or fails its self-test (deno_internals.ts),
 * every connection is relayed instead, cleartext or TLS, to a `Deno.serve` on an ephemeral
 * loopback port (the fallback): the guard keeps the client's socket and closes it on a deadline,
 * and the same limits hold, at the relay's cost.
 */
export class GuardedListener {
  readonly #listener: Deno.Listener;
  /** TLS: the runtime's TLS listener on loopback that the relays connect to. */
  readonly #inner: Deno.TlsListener | undefined;
  readonly #options: GuardedListenOptions;
  readonly #perIp: AddressCounts;
  readonly #open = new Set<OpenConnection>();
  /** The runtime's per-connection server, once its self-test has passed. */
  readonly #door: Promise<RuntimeHttp | undefined>;
  #http: RuntimeHttp | undefined;
  /** The fallback: the loopback server every connection is relayed to. */
  #fallback: Deno.HttpServer<Deno.NetAddr> | undefined;
  /** The fallback's graceful shutdown, once begun. */
  #fallbackStopped: Promise<void> | undefined;
  /** The fallback: each relayed connection's request handler, by the relay's loopback port. */
  readonly #routes = new Map<number, Handler>();
  /** TLS: relayed connections by the relay's loopback port, until the inner side accepts them. */
  readonly #relayed = new Map<number, OpenConnection>();
  /** TLS: inner connections accepted before their relay registered (with the time). */
  readonly #unclaimed = new Map<number, { conn: Deno.Conn; at: number }>();
  readonly #clock: Clock;
  /** Stops the sweep timer. */
  #stopSweep: () => void = noop;
  /** Milliseconds between sweeps. */
  #every = 1000;
  #closed = false;
  #draining = false;
  /** A shutdown's grace has passed: every sweep closes what it can. */
  #forced = false;
  readonly #drained = Promise.withResolvers<void>();

  constructor(options: GuardedListenOptions) {
    this.#options = options;
    this.#clock = options.clock ?? systemClock;
    this.#door = options.runtimeHttp ?? runtimeHttp();
    this.#perIp = new AddressCounts(options.addressCounts);
    this.#listener = Deno.listen({
      hostname: options.hostname,
      port: options.port,
      reusePort: options.reusePort,
    });
    if (options.tls) {
      try {
        this.#inner = Deno.listenTls({
          hostname: "127.0.0.1",
          port: 0,
          ...options.tls,
          alpnProtocols: ["h2", "http/1.1"],
        });
      } catch (err) {
        closeQuietly(this.#listener);
        throw err;
      }
    }
  }

  /** The address it listens on. */
  get addr(): Deno.NetAddr {
    return this.#listener.addr as Deno.NetAddr;
  }

  /** Open connections. */
  get connections(): number {
    return this.#open.size;
  }

  /** Starts accepting; `handler` answers every request of every connection. */
  serve(handler: Handler, onError: OnError): void {
    const { headerTimeoutMs, idleTimeoutMs } = this.#options;
    const period = Math.max(50, Math.min(1000, Math.min(headerTimeoutMs, idleTimeoutMs) / 4));
    this.#every = period;
    this.#stopSweep = every(this.#clock, period, () => this.#closeExpired(), { unref: true });
    void this.#start(handler, onError);
  }

  /**
   * Learns whether the runtime's per-connection server can be used (settled after the first
   * listener of the isolate), then accepts: through it, or through the fallback.
   */
  async #start(handler: Handler, onError: OnError): Promise<void> {
    this.#http = await this.#door;
    if (this.#closed) return;
    let relayTo: Deno.NetAddr | undefined;
    if (this.#http) {
      if (this.#inner) {
        relayTo = this.#inner.addr as Deno.NetAddr;
        void this.#innerAcceptLoop(this.#inner, handler, onError);
      }
    } else {
      relayTo = this.#startFallback(onError);
    }
    await this.#acceptLoop(handler, onError, relayTo);
  }

  /**
   * The fallback's loopback server (TLS when the listener is): each request goes to the handler
   * its relay registered under the relay's port. A connection that did not come through a relay
   * (another local process) is refused.
   */
  #startFallback(onError: OnError): Deno.NetAddr {
    const tls = this.#options.tls;
    if (this.#inner) closeQuietly(this.#inner); // it checked the certificate; Deno.serve serves it
    const server = Deno.serve({
      hostname: "127.0.0.1",
      port: 0,
      ...(tls ? { cert: tls.cert, key: tls.key } : {}),
      onListen: noop,
      onError,
    }, (request, info) => {
      const route = this.#routes.get(info.remoteAddr.port);
      return route ? route(request, info) : new Response("Forbidden", { status: 403 });
    });
    this.#fallback = server;
    return server.addr;
  }

  /** The fallback's graceful shutdown (answer what is in flight, then close); once. */
  #stopFallback(): Promise<void> {
    if (!this.#fallback) return Promise.resolve();
    return this.#fallbackStopped ??= this.#fallback.shutdown().catch(noop);
  }

  /** Stops accepting; open connections are left to finish (or to their timeouts). */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    closeQuietly(this.#listener);
    if (this.#inner) closeQuietly(this.#inner);
    if (this.#open.size === 0) void this.#stopFallback();
  }

  /**
   * Stops accepting, lets the requests in flight finish (each connection closes after its
   * answer), then closes what is left; the sweep keeps closing connections that stall meanwhile.
   * After `graceMs` it stops waiting: what is left is closed as far as it can be (see
   * {@link closeAll}), and it resolves.
   */
  async shutdown(graceMs = Infinity): Promise<void> {
    // No grace left: a graceful close begun now could not be cut short any more.
    if (graceMs <= 0) {
      this.closeAll();
      return this.#stopFallback();
    }
    this.close();
    this.#draining = true;
    this.#drain(this.#clock.now());
    if (this.#open.size > 0) {
      const clock = this.#clock;
      let timer: ReturnType<Clock["setTimeout"]> | undefined;
      const grace = Number.isFinite(graceMs)
        ? new Promise<void>((resolve) => timer = clock.setTimeout(resolve, Math.max(0, graceMs)))
        : new Promise<void>(() => {});
      await Promise.race([this.#drained.promise, grace]);
      if (timer !== undefined) clock.clearTimeout(timer);
    }
    this.closeAll();
    if (this.#fallback) await this.#stopFallback();
  }

  /**
   * Closes each connection once nothing is in flight on it. One with a request running or a
   * tracked body moving gets the runtime's graceful close (answer, then close), except while a
   * request with a body is in flight (the sweeps come back to it). One with nothing in flight is
   * cancelled, once its last answer has had a sweep to be written: the graceful close would wait
   * for the rest of a request body the runtime still reads after the answer (a client trickling
   * one), and it takes the handle a forced close needs. A connection whose body the guard cut is
   * cancelled too, since the runtime would wait for the rest of that body.
   */
  #drain(now: number): void {
    for (const open of this.#open) {
      const client = open.client;
      if (open.draining || open.closing || client.uploads > 0) continue;
      if (!open.server || open.cut) {
        closeNow(open); // TLS not yet handed over (nothing in flight), or a body cut
      } else if (client.active === 0 && !client.moving) {
        if (now - client.lastActive >= this.#every) closeNow(open);
      } else {
        open.draining = true;
        open.cancel = undefined; // the graceful close takes the runtime's handle
        open.server.shutdown().catch(() => {});
      }
    }
  }

  /**
   * Closes every open connection now, as far as it can be: tracked bodies are cut, a TLS
   * client's socket is closed, a cleartext connection is cancelled unless a request with a body
   * is in flight (its handler answers the cut first; the sweeps, which go on, cancel it then). A
   * cleartext connection already in the runtime's graceful close cannot be cancelled any more.
   */
  closeAll(): void {
    this.close();
    this.#forced = true;
    for (const open of this.#open) closeNow(open, true);
    for (const { conn } of this.#unclaimed.values()) closeQuietly(conn);
    this.#unclaimed.clear();
    if (this.#open.size === 0) this.#stopSweep();
  }

  #closeExpired(): void {
    const now = this.#clock.now();
    if (this.#forced) {
      for (const open of this.#open) closeNow(open, true);
      if (this.#open.size === 0) this.#stopSweep();
      return;
    }
    const { headerTimeoutMs, idleTimeoutMs } = this.#options;
    for (const open of this.#open) {
      const client = open.client;
      const limit = client.requests === 0 ? headerTimeoutMs : idleTimeoutMs;
      if (now - client.lastActive > limit) closeNow(open);
      // closeAfterAnswer, or a body the guard cut (the runtime would wait for the rest of it):
      // once the answer has had a sweep to be written.
      else if (
        (client.closeAsked || open.cut) && client.active === 0 &&
        now - client.lastActive >= this.#every
      ) {
        closeNow(open);
      }
    }
    if (this.#draining) this.#drain(now);
    for (const [port, { conn, at }] of this.#unclaimed) {
      // Not one of our relays (they register within a turn or two).
      if (now - at > 1_000) {
        this.#unclaimed.delete(port);
        closeQuietly(conn);
      }
    }
  }

  /** Accepts connections: relayed to `relayTo` (TLS, the fallback), else served here. */
  async #acceptLoop(handler: Handler, onError: OnError, relayTo?: Deno.NetAddr): Promise<void> {
    while (!this.#closed) {
      let conn: Deno.Conn;
      try {
        conn = await this.#listener.accept();
      } catch {
        if (this.#closed) return;
        // Out of file descriptors, for one: do not spin on it.
        await new Promise((resolve) => setTimeout(resolve, 20));
        continue;
      }
      const open = this.#admit(conn);
      if (!open) continue;
      if (relayTo) void this.#relay(conn, open, relayTo, handler, onError);
      else this.#serveOn(conn, open, handler, onError, open.release);
    }
  }

  /** Counts the connection against its address's cap: its record, or undefined when refused. */
  #admit(conn: Deno.Conn): (OpenConnection & { release: () => void }) | undefined {
    const remote = conn.remoteAddr as Deno.NetAddr;
    const ip = remote.hostname;
    const admission = this.#perIp.acquire(ip, this.#options.maxConnectionsPerIp);
    if (admission === "refused") {
      closeQuietly(conn);
      return undefined;
    }
    const open = {
      client: new ClientConnection(ip, remote.port, this.#clock),
      closing: false,
      cut: false,
      draining: false,
      release: () => {
        if (!this.#open.delete(open)) return;
        if (admission === "counted") this.#perIp.release(ip);
        if (this.#open.size > 0) return;
        if (this.#draining) this.#drained.resolve();
        if (this.#closed) void this.#stopFallback();
      },
    };
    this.#open.add(open);
    return open;
  }

  /** `handler` for the requests of one connection, counting them on its client. */
  #requestHandler(client: ClientConnection, handler: Handler): Handler {
    return (request: Request, info: Deno.ServeHandlerInfo<Deno.NetAddr>) => {
      client.requests++;
      client.active++;
      client.touch();
      const method = request.method;
      const upload = method !== "GET" && method !== "HEAD" && request.body !== null;
      if (upload) client.uploads++;
      let answer: Response | Promise<Response>;
      try {
        answer = handler(request, new GuardedServeInfo(info, client));
      } catch (err) {
        client.active--;
        if (upload) client.uploads--;
        throw err;
      }
      if (answer instanceof Promise) {
        return upload
          ? answer.then(client.uploadEnded, client.uploadFailed)
          : answer.then(client.ended, client.failed);
      }
      client.touch();
      client.active--;
      if (upload) client.uploads--;
      return answer;
    };
  }

  /** Runs the runtime's server on `conn`; `ended` runs when it has let the connection go. */
  #serveOn(
    conn: Deno.Conn,
    open: OpenConnection,
    handler: Handler,
    onError: OnError,
    ended: () => void,
  ): void {
    const done = () => {
      open.cancel = undefined;
      ended();
    };
    let server: ConnectionServer;
    try {
      const onRequest = this.#requestHandler(open.client, handler);
      server = this.#http!.serveConnection(conn, onRequest, onError, (cancel) => {
        open.cancel = cancel;
      });
      open.server = server;
    } catch {
      closeQuietly(conn);
      done();
      return;
    }
    server.finished.then(done, done);
  }

  /** TLS: pairs each loopback connection with the relay that made it, then serves it. */
  async #innerAcceptLoop(inner: Deno.TlsListener, handler: Handler, onError: OnError) {
    while (!this.#closed) {
      let conn: Deno.Conn;
      try {
        conn = await inner.accept();
      } catch {
        if (this.#closed) return;
        await new Promise((resolve) => setTimeout(resolve, 20));
        continue;
      }
      const port = (conn.remoteAddr as Deno.NetAddr).port;
      const open = this.#relayed.get(port);
      if (!open) {
        this.#unclaimed.set(port, { conn, at: this.#clock.now() });
        continue;
      }
      this.#relayed.delete(port);
      this.#serveOn(conn, open, handler, onError, noop);
    }
  }

  /**
   * Relays the client's bytes to the inner server: TLS, until either side ends; the fallback,
   * until the server ends (its answers are out: what the client sends after is of no use).
   */
  async #relay(
    client: Deno.Conn,
    open: OpenConnection & { release: () => void },
    inner: Deno.NetAddr,
    handler: Handler,
    onError: OnError,
  ): Promise<void> {
    let server: Deno.TcpConn | undefined;
    try {
      server = await Deno.connect({ hostname: "127.0.0.1", port: inner.port });
      server.setNoDelay(true);
      open.sockets = [client, server];
      if (open.closing) return;
      const port = (server.localAddr as Deno.NetAddr).port;
      if (this.#fallback) {
        this.#routes.set(port, this.#requestHandler(open.client, handler));
        open.server = { shutdown: () => this.#stopFallback() };
        const answers = this.#pump(server, client, open);
        void this.#pump(client, server, open);
        await answers;
        return;
      }
      const accepted = this.#unclaimed.get(port);
      if (accepted) {
        this.#unclaimed.delete(port);
        this.#serveOn(accepted.conn, open, handler, onError, noop);
      } else {
        this.#relayed.set(port, open);
      }
      await Promise.all([this.#pump(client, server, open), this.#pump(server, client, open)]);
    } catch {
      // a broken connection on either side ends the relay
    } finally {
      if (server) {
        const port = (server.localAddr as Deno.NetAddr).port;
        this.#relayed.delete(port);
        this.#routes.delete(port);
      }
      closeQuietly(client);
      if (server) closeQuietly(server);
      open.release();
    }
  }

  /**
   * Copies one direction until it ends, then half-closes the other side. Bytes are not activity:
   * requests and tracked bodies are, as on a connection served directly (bytes trickled after a
   * TLS handshake, or through the fallback, would otherwise hold off the header timeout).
   */
  async #pump(from: Deno.Conn, to: Deno.Conn, open: OpenConnection): Promise<void> {
    const buf = new Uint8Array(16 * 1024);
    try {
      while (!open.closing) {
        const n = await from.read(buf);
        if (n === null) break;
        let offset = 0;
        while (offset < n) offset += await to.write(buf.subarray(offset, n));
      }
    } catch {
      // closed or reset
    } finally {
      try {
        await (to as Deno.TcpConn).closeWrite();
      } catch {
        // closed
      }
    }
  }
}

/** What a handler of the guarded server sees: the client's address and its connection. */
export class GuardedServeInfo implements Deno.ServeHandlerInfo<Deno.NetAddr> {
  readonly #info: Deno.ServeHandlerInfo<Deno.NetAddr>;
  /** The client connection (tracks the bodies the handler streams). */
  readonly client: ClientConnection;

  constructor(info: Deno.ServeHandlerInfo<Deno.NetAddr>, client: ClientConnection) {
    this.#info = info;
    this.client = client;
  }

  /** The client's address (read once per connection). */
  get remoteAddr(): Deno.NetAddr {
    return this.client.addr;
  }

  get completed(): Promise<void> {
    return this.#info.completed;
  }
}

/** The client connection of a request served by a guarded listener, else undefined. */
export function clientOf(info: Deno.ServeHandlerInfo<Deno.NetAddr>): ClientConnection | undefined {
  return info instanceof GuardedServeInfo ? info.client : undefined;
}
