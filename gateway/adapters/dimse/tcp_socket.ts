/**
 * A plain TCP connection (Deno.TcpConn) with the part of the node:net `Socket` interface the
 * DIMSE layer uses (write, cork/uncork, setNoDelay, setTimeout, destroy; connect, data, error,
 * timeout and close events). Reads go into one buffer reused for the whole connection, so
 * receiving allocates nothing per read: a 'data' chunk is valid only during its event (the DIMSE
 * reader copies what it keeps). Writes are queued in order and gathered into one reused buffer (a
 * PDV header and its value go out in one write); a piece larger than that buffer is written as it
 * is.
 */
import { EventEmitter } from "node:events";

/** Read buffer size: a 64 KiB PDU and its header in one read. */
const READ_BUFFER = 128 * 1024;
/** Queued pieces are gathered into one write up to this size. */
const GATHER = 128 * 1024;

/** A node-Socket-shaped TCP connection. */
export class TcpSocket extends EventEmitter {
  remoteAddress: string | undefined;
  remotePort: number | undefined;
  #conn: Deno.TcpConn | undefined;
  #noDelay = false;
  #queue: Uint8Array[] = [];
  #writing = false;
  #corked = 0;
  #destroyed = false;
  #timeoutMs = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** When bytes last arrived (Date.now(): no op call per read, unlike a timer refresh). */
  #lastRead = 0;
  readonly #gather = new Uint8Array(GATHER);

  /** Wrap an open connection (accepted by a listener); reading starts at once. */
  constructor(conn?: Deno.TcpConn) {
    super();
    if (conn) this.#open(conn, false);
  }

  /** Connect to `host:port`; 'connect' or 'error' (then 'close') follows. */
  static connect(host: string, port: number): TcpSocket {
    const socket = new TcpSocket();
    Deno.connect({ hostname: host, port, transport: "tcp" }).then(
      (conn) => {
        if (socket.#destroyed) conn.close();
        else socket.#open(conn, true);
      },
      (err: Error) => socket.destroy(err),
    );
    return socket;
  }

  /** True once the connection is closed. */
  get destroyed(): boolean {
    return this.#destroyed;
  }

  /** Disable Nagle's algorithm (now, or once connected). */
  setNoDelay(noDelay = true): this {
    this.#noDelay = noDelay;
    this.#conn?.setNoDelay(noDelay);
    return this;
  }

  /** Emit 'timeout' after `ms` without received bytes (0: never). */
  setTimeout(ms: number): this {
    this.#timeoutMs = ms;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#lastRead = Date.now();
    this.#arm(ms);
    return this;
  }

  /** Queue bytes; they are sent in order. Returns false once destroyed. */
  write(bytes: Uint8Array): boolean {
    if (this.#destroyed) return false;
    this.#queue.push(bytes);
    if (this.#corked === 0) this.#flush();
    return true;
  }

  /** Hold writes until `uncork`. */
  cork(): void {
    this.#corked++;
  }

  /** Send what was written while corked. */
  uncork(): void {
    if (this.#corked > 0 && --this.#corked === 0) this.#flush();
  }

  /** Close the connection at once; 'error' (when given) and 'close' are emitted once. */
  destroy(err?: Error): this {
    if (this.#destroyed) return this;
    this.#destroyed = true;
    clearTimeout(this.#timer);
    this.#queue = [];
    try {
      this.#conn?.close();
    } catch {
      // closed already
    }
    queueMicrotask(() => {
      if (err) this.emit("error", err);
      this.emit("close", Boolean(err));
    });
    return this;
  }

  #open(conn: Deno.TcpConn, connected: boolean): void {
    this.#conn = conn;
    const remote = conn.remoteAddr as Deno.NetAddr;
    this.remoteAddress = remote.hostname;
    this.remotePort = remote.port;
    if (this.#noDelay) conn.setNoDelay(true);
    if (connected) this.emit("connect");
    this.#read();
    this.#flush();
  }

  /**
   * The idle timer, due in `ms`. Reads only note their time; when the timer fires it looks
   * whether bytes came meanwhile and, if so, waits for the rest of the timeout from the last of
   * them (a timer refresh per read cost about 0.5 µs, two per DIMSE round trip).
   */
  #arm(ms: number): void {
    if (this.#timeoutMs <= 0 || this.#destroyed) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      if (this.#timeoutMs <= 0 || this.#destroyed) return;
      const left = this.#lastRead + this.#timeoutMs - Date.now();
      if (left > 0) return this.#arm(left);
      this.emit("timeout");
    }, ms);
    this.#timer.unref();
  }

  async #read(): Promise<void> {
    const buf = new Uint8Array(READ_BUFFER);
    try {
      while (!this.#destroyed) {
        const n = await this.#conn!.read(buf);
        if (n === null) break;
        this.#lastRead = Date.now();
        // After a 'timeout', bytes arm the timer again (as a refresh did).
        if (this.#timer === undefined && this.#timeoutMs > 0) this.#arm(this.#timeoutMs);
        this.emit("data", buf.subarray(0, n));
      }
      this.destroy();
    } catch (err) {
      this.destroy(err as Error);
    }
  }

  /** Write the queue in order (once connected). */
  async #flush(): Promise<void> {
    if (this.#writing || !this.#conn) return;
    this.#writing = true;
    try {
      while (this.#queue.length > 0 && !this.#destroyed) {
        const next = this.#take();
        let at = 0;
        while (at < next.byteLength) at += await this.#conn.write(next.subarray(at));
      }
    } catch (err) {
      this.destroy(err as Error);
    } finally {
      this.#writing = false;
    }
  }

  /** The next bytes to write: queued pieces gathered in the reused buffer, or one large piece. */
  #take(): Uint8Array {
    if (this.#queue[0].byteLength > GATHER) return this.#queue.shift()!;
    let size = 0;
    let n = 0;
    while (n < this.#queue.length && size + this.#queue[n].byteLength <= GATHER) {
      this.#gather.set(this.#queue[n], size);
      size += this.#queue[n].byteLength;
      n++;
    }
    this.#queue.splice(0, n);
    return this.#gather.subarray(0, size);
  }
}
