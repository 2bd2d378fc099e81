/**
 * One MLLP connection to a receiver: opened over TCP or TLS with a timeout, it sends a framed
 * message and hands back the frames that come back, one waiter at a time. A background read loop
 * notices when the receiver closes the connection, so an idle one it dropped is never used.
 */
import { encodeMllpFrame, MllpFrameReader } from "../../adapters/mllp/mod.ts";

/** Why a connection could not do what was asked. */
export type Hl7ConnectionErrorKind =
  | "connect_refused"
  | "connect_timeout"
  | "connect_failed"
  | "tls_failed"
  | "closed"
  | "framing";

/** A failure of a connection, with what kind it was. */
export class Hl7ConnectionError extends Error {
  /** What went wrong. */
  readonly kind: Hl7ConnectionErrorKind;

  /** An error of `kind`. */
  constructor(kind: Hl7ConnectionErrorKind, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "Hl7ConnectionError";
    this.kind = kind;
  }
}

/** Where and how to connect. */
export interface ConnectSettings {
  /** Host name or IP (IPv6 without brackets). */
  hostname: string;
  /** TCP port. */
  port: number;
  /** TLS settings; absent for plain TCP. */
  tls?: { caCerts?: string[]; cert?: string; key?: string };
  /** Limit for the TCP connect plus the TLS handshake. */
  timeoutMs: number;
  /** Largest frame accepted from the receiver. */
  maxFrameBytes: number;
}

/** An open MLLP connection. */
export class MllpConnection {
  readonly #conn: Deno.Conn;
  readonly #reader: MllpFrameReader;
  #waiter: { resolve: (frame: Uint8Array) => void; reject: (err: Error) => void } | undefined;
  #frames: Uint8Array[] = [];
  #closed: Hl7ConnectionError | undefined;
  /** Messages sent on this connection so far. */
  sent = 0;
  /** Control ids of the last messages sent here (to recognize a late or repeated ACK). */
  readonly #ids: string[] = [];
  /** Called once when the connection closes (either side). */
  onClose: (() => void) | undefined;

  private constructor(conn: Deno.Conn, maxFrameBytes: number) {
    this.#conn = conn;
    this.#reader = new MllpFrameReader({ maxFrameBytes });
    void this.#readLoop();
  }

  /** Opens a connection; errors are {@link Hl7ConnectionError}s (or `signal`'s reason). */
  static async open(s: ConnectSettings, signal?: AbortSignal): Promise<MllpConnection> {
    return new MllpConnection(await connect(s, signal), s.maxFrameBytes);
  }

  /** True while the connection can carry a message. */
  get usable(): boolean {
    return this.#closed === undefined;
  }

  /**
   * Sends `payload` in a frame. Throws `closed` when the connection was already closed (nothing
   * was sent) or the write failed.
   */
  async send(payload: Uint8Array, controlId = ""): Promise<void> {
    if (this.#closed) throw this.#closed;
    // Frames left from before (a late or repeated ACK) are not answers to this message.
    this.#frames = [];
    const frame = encodeMllpFrame(payload);
    try {
      let written = 0;
      while (written < frame.byteLength) written += await this.#conn.write(frame.subarray(written));
    } catch (err) {
      this.#fail(new Hl7ConnectionError("closed", `write failed: ${(err as Error).message}`));
      throw this.#closed;
    }
    this.sent++;
    if (controlId !== "") {
      this.#ids.push(controlId);
      if (this.#ids.length > 32) this.#ids.shift();
    }
  }

  /** True when a message with `controlId` was sent here before the last one. */
  sentBefore(controlId: string): boolean {
    return this.#ids.indexOf(controlId) < this.#ids.length - 1 && this.#ids.includes(controlId);
  }

  /** The next frame the receiver sends; rejects when the connection closes first. */
  nextFrame(): Promise<Uint8Array> {
    const queued = this.#frames.shift();
    if (queued) return Promise.resolve(queued);
    if (this.#closed) return Promise.reject(this.#closed);
    return new Promise((resolve, reject) => {
      this.#waiter = { resolve, reject };
    });
  }

  /** Closes the connection; a pending {@link nextFrame} rejects with `closed`. */
  close(why = "closed by the gateway"): void {
    this.#fail(new Hl7ConnectionError("closed", why));
  }

  async #readLoop(): Promise<void> {
    const buf = new Uint8Array(64 * 1024);
    try {
      while (this.#closed === undefined) {
        const n = await this.#conn.read(buf);
        if (n === null) {
          this.#fail(new Hl7ConnectionError("closed", "the receiver closed the connection"));
          return;
        }
        for (const frame of this.#reader.push(buf.subarray(0, n))) {
          const waiter = this.#waiter;
          this.#waiter = undefined;
          if (waiter) waiter.resolve(frame);
          else this.#frames.push(frame);
        }
      }
    } catch (err) {
      const kind = err instanceof Error && err.name === "MllpFrameError" ? "framing" : "closed";
      const what = kind === "framing" ? "bad MLLP framing from the receiver" : "read failed";
      this.#fail(new Hl7ConnectionError(kind, `${what}: ${(err as Error).message}`));
    }
  }

  #fail(err: Hl7ConnectionError): void {
    if (this.#closed) return;
    this.#closed = err;
    try {
      this.#conn.close();
    } catch {
      // already closed
    }
    const waiter = this.#waiter;
    this.#waiter = undefined;
    waiter?.reject(err);
    this.onClose?.();
  }
}

/** TCP (then TLS when asked) with a timeout covering both. */
async function connect(s: ConnectSettings, signal?: AbortSignal): Promise<Deno.Conn> {
  const where = `${s.hostname}:${s.port}`;
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, s.timeoutMs);
  const onAbort = () => controller.abort();
  signal?.addEventListener("abort", onAbort, { once: true });
  let conn: Deno.Conn | undefined;
  let stage = "connect";
  try {
    if (s.tls?.cert !== undefined && s.tls.key !== undefined) {
      // Deno.startTls cannot present a client certificate: connectTls does both steps, without
      // a signal, so the race below gives up on it and closes a late one.
      stage = "tls";
      const pending = Deno.connectTls({
        hostname: s.hostname,
        port: s.port,
        caCerts: s.tls.caCerts,
        cert: s.tls.cert,
        key: s.tls.key,
      }).then(async (tls) => {
        try {
          await tls.handshake();
          return tls;
        } catch (err) {
          tls.close();
          throw err;
        }
      });
      const aborted = new Promise<never>((_, reject) =>
        controller.signal.addEventListener("abort", () => reject(controller.signal.reason), {
          once: true,
        })
      );
      try {
        return await Promise.race([pending, aborted]);
      } catch (err) {
        pending.then((tls) => tls.close(), () => {});
        throw err;
      }
    }
    const tcp = await Deno.connect({
      hostname: s.hostname,
      port: s.port,
      signal: controller.signal,
    });
    tcp.setNoDelay(true);
    conn = tcp;
    if (s.tls) {
      stage = "tls";
      const tls = await Deno.startTls(tcp, { hostname: s.hostname, caCerts: s.tls.caCerts });
      conn = tls;
      const closeTls = () => tls.close();
      controller.signal.addEventListener("abort", closeTls, { once: true });
      try {
        controller.signal.throwIfAborted();
        await tls.handshake();
      } finally {
        controller.signal.removeEventListener("abort", closeTls);
      }
    }
    return conn;
  } catch (err) {
    try {
      conn?.close();
    } catch {
      // closed by the abort
    }
    if (signal?.aborted) throw signal.reason;
    const message = (err as Error).message;
    if (timedOut) {
      throw new Hl7ConnectionError(
        "connect_timeout",
        `connecting to ${where} timed out after ${s.timeoutMs} ms`,
      );
    }
    if (err instanceof Deno.errors.ConnectionRefused) {
      throw new Hl7ConnectionError("connect_refused", `connection refused by ${where}`, {
        cause: err,
      });
    }
    if (stage === "tls") {
      throw new Hl7ConnectionError("tls_failed", `TLS handshake with ${where} failed: ${message}`, {
        cause: err,
      });
    }
    throw new Hl7ConnectionError("connect_failed", `cannot connect to ${where}: ${message}`, {
      cause: err,
    });
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener("abort", onAbort);
  }
}
