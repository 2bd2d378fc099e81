/** One upstream socket with its reusable read buffer. */

import type { ReadBuffer } from "./body.ts";

/** Size of a connection's read buffer (also the largest body chunk handed out). */
export const READ_BUFFER_BYTES = 64 * 1024;

/** Write buffers up to this size are kept for the next request; larger ones are one-off. */
const MAX_KEPT_WRITE_BYTES = 128 * 1024;

/** What reads a response head on a connection (the exchange). */
export interface HeadReader {
  headRead(n: number | null): void;
  fail(error: unknown): void;
}

/** What writes a request head on a connection (the exchange). */
export interface HeadWriter {
  headWritten(n: number): void;
  writeFailed(error: unknown): void;
}

/** A TCP or TLS connection to one origin, used for one request at a time. */
export class Connection implements ReadBuffer {
  readonly conn: Deno.Conn;
  /** The pool's key of its origin: `host:port` for http, `https://host:port` for https. */
  readonly origin: string;
  buf: Uint8Array<ArrayBuffer> = new Uint8Array(READ_BUFFER_BYTES);
  start = 0;
  end = 0;
  /** When it was put in the pool (ms since epoch). */
  idleSince = 0;
  /** In the pool, waiting for a request. */
  idle = false;
  closed = false;
  /** The idle read started by {@link watch}, settled once it completes (and its result handed on). */
  watching: Promise<unknown> | null = null;
  #writeBuf: Uint8Array<ArrayBuffer> | null = null;
  // A read issued while idle, so a server's close is noticed at once; the next fill() takes it.
  #pending: Promise<number | null> | null = null;
  /** The pending watch read was claimed by {@link readHead}. */
  #handOff = false;

  constructor(conn: Deno.Conn, origin: string) {
    this.conn = conn;
    this.origin = origin;
  }

  #onEnd: ((conn: Connection) => void) | null = null;

  /** The exchange reading its response head on this socket (one at a time). */
  reading: HeadReader | null = null;
  /** Callbacks of a head read, made once per socket: they hand the result to `reading`. */
  readonly onRead = (n: number | null): void => this.reading!.headRead(n);
  readonly onReadFailed = (error: unknown): void => this.reading!.fail(error);
  /** The exchange writing its request head on this socket, and that write's callbacks. */
  writing: HeadWriter | null = null;
  readonly onWritten = (n: number): void => this.writing!.headWritten(n);
  readonly onWriteFailed = (error: unknown): void => this.writing!.writeFailed(error);

  /**
   * Reads for the head of the exchange in `reading`: the result goes to its `headRead` (or
   * `fail`). A socket taken from the pool has its watch read pending: that read's one callback
   * hands the result over, rather than a second `then` on the same promise.
   */
  readHead(max: number): void {
    if (this.#pending !== null) {
      this.#pending = null;
      this.#handOff = true;
      return;
    }
    this.read(max).then(this.onRead, this.onReadFailed);
  }

  /**
   * Starts reading more bytes into the buffer, growing it up to `max` when full; hand the result
   * to {@link filled}. (Two steps rather than one async method: no promise of ours per read.)
   */
  read(max = READ_BUFFER_BYTES): Promise<number | null> {
    if (this.start === this.end) this.start = this.end = 0;
    else if (this.end === this.buf.length) this.#makeRoom(max);
    const pending = this.#pending;
    if (pending !== null) {
      this.#pending = null;
      return pending;
    }
    // An empty buffer is read into whole: no view to make.
    return this.conn.read(this.end === 0 ? this.buf : this.buf.subarray(this.end));
  }

  /** Takes the result of {@link read}: false at end of stream. */
  filled(n: number | null): boolean {
    if (n === null) return false;
    this.end += n;
    return true;
  }

  #makeRoom(max: number): void {
    const used = this.end - this.start;
    if (this.start > 0) {
      this.buf.copyWithin(0, this.start, this.end);
    } else {
      const size = Math.min(this.buf.length * 2, max);
      // Callers check their limits first; this guards against a zero-length read spinning.
      if (size <= this.buf.length) throw new RangeError("connection read buffer is full");
      const bigger = new Uint8Array(size);
      bigger.set(this.buf.subarray(this.start, this.end));
      this.buf = bigger;
    }
    this.start = 0;
    this.end = used;
  }

  /**
   * A scratch buffer of at least `size` bytes for the next write. Reusing it is safe because a
   * request awaits each write and the next request starts only after the whole upload.
   */
  writeBuffer(size: number): Uint8Array<ArrayBuffer> {
    if (this.#writeBuf !== null && this.#writeBuf.length >= size) return this.#writeBuf;
    if (size > MAX_KEPT_WRITE_BYTES) return new Uint8Array(size);
    return this.#writeBuf = new Uint8Array(Math.max(4096, size));
  }

  /** Writes all of `data`. */
  async write(data: Uint8Array): Promise<void> {
    let written = await this.conn.write(data);
    while (written < data.byteLength) written += await this.conn.write(data.subarray(written));
  }

  /**
   * Marks the connection idle and starts a read; when it completes while still idle (the server
   * closed the socket or sent something unasked) `onEnd` runs.
   */
  watch(onEnd: (conn: Connection) => void): void {
    this.idle = true;
    this.start = this.end = 0;
    this.#onEnd = onEnd;
    const read = this.conn.read(this.buf);
    this.#pending = read;
    this.#handOff = false;
    this.watching = read.then(this.#watchRead, this.#watchFailed);
  }

  // The watch read's callbacks, one pair per connection (not per release): while idle, the
  // server closed or sent something unasked; once taken, the result is the next head read's.
  readonly #watchRead = (n: number | null): void => {
    if (this.#handOff) {
      this.#handOff = false;
      this.onRead(n);
    } else if (this.idle) this.#onEnd?.(this);
  };
  readonly #watchFailed = (error: unknown): void => {
    if (this.#handOff) {
      this.#handOff = false;
      this.onReadFailed(error);
    } else if (this.idle) this.#onEnd?.(this);
  };

  /** Closes the socket (idempotent); pending reads and writes reject. */
  destroy(): void {
    if (this.closed) return;
    this.closed = true;
    this.idle = false;
    try {
      this.conn.close();
    } catch {
      // already closed
    }
  }
}
