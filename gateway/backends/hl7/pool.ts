/**
 * The connections of an `hl7` backend to its receiver: at most `size` open, each lent to one
 * message at a time (MLLP has no message ids on the wire beyond MSA-2, so a connection carries
 * one message and its ACK before the next). Callers beyond `size` wait their turn in order. A
 * lent connection comes back idle for reuse, or is dropped (closed by either side, or past
 * `messagesPerConnection`) and its slot opens a new one on demand. Idle connections close after
 * `idleMs`; one the receiver closes meanwhile leaves the pool at once.
 */
import { type ConnectSettings, MllpConnection } from "./connection.ts";

/** Settings of a {@link ConnectionPool}. */
export interface PoolSettings {
  /** Most connections open at once. */
  size: number;
  /** Milliseconds an idle connection is kept; 0 closes it when given back. */
  idleMs: number;
  /** Messages per connection before it is replaced; 0 for no limit. */
  messagesPerConnection: number;
  /** Told when an idle connection leaves the pool: "idle" (timed out) or "closed by the receiver". */
  onDrop?: (why: string) => void;
}

interface Idle {
  conn: MllpConnection;
  timer: ReturnType<typeof setTimeout> | undefined;
}

/** A connection lent by the pool: give it back with {@link ConnectionPool.release}. */
export interface Lease {
  /** The connection. */
  conn: MllpConnection;
  /** True when it came from the idle list (it may have been closed by the receiver meanwhile). */
  reused: boolean;
}

/** Connections to one destination. */
export class ConnectionPool {
  readonly #connect: ConnectSettings;
  readonly #s: PoolSettings;
  readonly #idle: Idle[] = [];
  readonly #waiting: Array<(given: Idle | undefined | Error) => void> = [];
  #lent = 0;
  #opened = 0;
  #closed = false;

  /** A pool of connections opened with `connect`. */
  constructor(connect: ConnectSettings, settings: PoolSettings) {
    this.#connect = connect;
    this.#s = settings;
  }

  /** Connections opened so far (for tests and status). */
  get opened(): number {
    return this.#opened;
  }

  /** Idle connections held now. */
  get idle(): number {
    return this.#idle.length;
  }

  /**
   * A connection for one message: an idle one when there is one, else a new one when a slot is
   * free, else the next one given back (in the order asked). Aborting `signal` gives up waiting.
   */
  async acquire(signal: AbortSignal): Promise<Lease> {
    if (this.#closed) throw new Error("the backend is closed");
    let idle: Idle | undefined;
    if (this.#waiting.length === 0 && this.#free) {
      this.#lent++;
      idle = this.#idle.pop();
    } else {
      idle = await this.#wait(signal); // the slot comes counted as lent, with its idle connection
    }
    try {
      if (idle) {
        if (idle.timer !== undefined) clearTimeout(idle.timer);
        idle.conn.onClose = undefined;
        if (idle.conn.usable) return { conn: idle.conn, reused: true };
      }
      return { conn: await this.open(signal), reused: false };
    } catch (err) {
      this.#lent--;
      this.#dispatch();
      throw err;
    }
  }

  /** True when a caller can have a connection now: an idle one, or room for a new one. */
  get #free(): boolean {
    return this.#idle.length > 0 || this.#lent + this.#idle.length < this.#s.size;
  }

  /** Opens a new connection (counted), for a lease whose reused connection turned out dead. */
  async open(signal: AbortSignal): Promise<MllpConnection> {
    const conn = await MllpConnection.open(this.#connect, signal);
    this.#opened++;
    return conn;
  }

  /** Gives a lent connection back: kept idle when `reusable` and still good, else closed. */
  release(conn: MllpConnection, reusable: boolean): void {
    this.#lent--;
    const limit = this.#s.messagesPerConnection;
    const spent = limit > 0 && conn.sent >= limit;
    if (!reusable || spent || this.#closed || this.#s.idleMs === 0 || !conn.usable) {
      conn.close();
    } else {
      const entry: Idle = { conn, timer: undefined };
      entry.timer = setTimeout(() => this.#drop(entry, "idle"), this.#s.idleMs);
      // An idle connection must not keep the process alive.
      Deno.unrefTimer(entry.timer as unknown as number);
      conn.onClose = () => this.#drop(entry, "closed by the receiver");
      this.#idle.push(entry);
    }
    this.#dispatch();
  }

  /** Closes the idle connections; later releases close theirs. */
  close(): void {
    this.#closed = true;
    for (const entry of this.#idle.splice(0)) {
      if (entry.timer !== undefined) clearTimeout(entry.timer);
      entry.conn.onClose = undefined;
      entry.conn.close();
    }
    for (const wake of this.#waiting.splice(0)) wake(new Error("the backend is closed"));
  }

  #drop(entry: Idle, why: string): void {
    const at = this.#idle.indexOf(entry);
    if (at < 0) return;
    this.#idle.splice(at, 1);
    if (entry.timer !== undefined) clearTimeout(entry.timer);
    entry.conn.onClose = undefined;
    entry.conn.close(why);
    this.#s.onDrop?.(why);
    this.#dispatch();
  }

  #wait(signal: AbortSignal): Promise<Idle | undefined> {
    signal.throwIfAborted();
    return new Promise((resolve, reject) => {
      const wake = (given: Idle | undefined | Error) => {
        signal.removeEventListener("abort", onAbort);
        if (given instanceof Error) reject(given);
        else resolve(given);
      };
      const onAbort = () => {
        const at = this.#waiting.indexOf(wake);
        if (at >= 0) this.#waiting.splice(at, 1);
        reject(signal.reason);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      this.#waiting.push(wake);
    });
  }

  /**
   * Hands free slots to the callers waiting, first come first served: an idle connection, taken
   * off the list now so that no one else gets it, or room to open one.
   */
  #dispatch(): void {
    while (this.#waiting.length > 0 && this.#free) {
      this.#lent++;
      this.#waiting.shift()!(this.#idle.pop());
    }
  }
}
