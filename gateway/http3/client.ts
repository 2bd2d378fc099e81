/**
 * An HTTP/3 client connection: many concurrent requests, one bidirectional stream each, over one
 * QUIC connection (TLS 1.3, ALPN h3). A GOAWAY from the server makes the connection refuse new
 * requests; requests the server did not process fail with `processed: false` so callers can
 * retry them on a new connection.
 */
import { Http3Error } from "./errors.ts";
import { bodyStream, type MessageContext, readHeaderSection } from "./message_stream.ts";
import { declaredLength, outgoingFields, parseResponseHead } from "./message.ts";
import { abandonedMarker, headersFrame, writeBody } from "./message_writer.ts";
import { Http3Session } from "./session.ts";
import { DEFAULT_MAX_FIELD_SECTION_SIZE } from "./server.ts";
import { FrameStreamReader, StreamAbortedError } from "./stream_reader.ts";

/** Where and how to connect. */
export interface Http3ConnectOptions {
  hostname: string;
  port: number;
  /** Name checked against the server certificate (default: hostname). */
  serverName?: string;
  /** Extra trusted CA certificates (PEM). */
  caCerts?: string[];
  maxFieldSectionSize?: number;
  /** Idle timeout of the connection in ms (default 30 s). */
  idleTimeoutMs?: number;
  /** Keep-alive interval in ms (default 10 s), so an idle pooled connection stays open. */
  keepAliveMs?: number;
  /** Aborts the handshake. */
  signal?: AbortSignal;
}

/** One request. */
export interface Http3RequestInit {
  method: string;
  /** `:authority`: host and port of the target. */
  authority: string;
  /** `:path`: path and query. */
  path: string;
  headers?: Headers;
  body?: Uint8Array | ReadableStream<Uint8Array> | null;
  signal?: AbortSignal;
}

/** A response whose body streams. */
export interface Http3Response {
  status: number;
  headers: Headers;
  /** Null for HEAD, 204 and 304. */
  body: ReadableStream<Uint8Array> | null;
  streamId: number;
}

/** A request failed before a response arrived. */
export class Http3RequestError extends Error {
  /** False when the server certainly did not process the request (safe to retry). */
  readonly processed: boolean;
  constructor(message: string, processed: boolean, cause?: unknown) {
    super(message, { cause });
    this.name = "Http3RequestError";
    this.processed = processed;
  }
}

/** A client connection. */
export class Http3Client {
  readonly session: Http3Session;
  #active = 0;

  private constructor(session: Http3Session) {
    this.session = session;
  }

  /** Connect and open the control and QPACK streams. */
  static async connect(opts: Http3ConnectOptions): Promise<Http3Client> {
    const connecting = Deno.connectQuic({
      hostname: opts.hostname,
      port: opts.port,
      serverName: opts.serverName ?? opts.hostname,
      caCerts: opts.caCerts,
      alpnProtocols: ["h3"],
      maxIdleTimeout: opts.idleTimeoutMs ?? 30_000,
      keepAliveInterval: opts.keepAliveMs ?? 10_000,
    });
    const conn = await abortable(Promise.resolve(connecting), opts.signal, (c) => c.close());
    const session = new Http3Session(conn, {
      role: "client",
      maxFieldSectionSize: opts.maxFieldSectionSize ?? DEFAULT_MAX_FIELD_SECTION_SIZE,
    });
    try {
      await session.open();
    } catch (err) {
      session.close();
      throw err;
    }
    return new Http3Client(session);
  }

  /** True while new requests may be sent (open, no GOAWAY received). */
  get usable(): boolean {
    return !this.session.isClosed && this.session.goawayReceived === null;
  }

  /** Requests in flight. */
  get active(): number {
    return this.#active;
  }

  /** Send a request; resolves once the response headers arrived. */
  async request(init: Http3RequestInit): Promise<Http3Response> {
    if (!this.usable) throw new Http3RequestError("connection is closed or going away", false);
    const signal = init.signal;
    signal?.throwIfAborted();
    this.#active++;
    let stream: Deno.QuicBidirectionalStream;
    try {
      stream = await abortable(
        this.session.conn.createBidirectionalStream({ waitUntilAvailable: true }),
        signal,
        (s) => {
          s.readable.cancel().catch(() => {});
          s.writable.abort().catch(() => {});
        },
      );
    } catch (err) {
      this.#active--;
      if (signal?.aborted) throw signal.reason;
      throw new Http3RequestError(`cannot open a stream: ${(err as Error).message}`, false, err);
    }
    const streamId = Number(stream.writable.id);
    const reader = new FrameStreamReader(stream.readable);
    const writer = stream.writable.getWriter();
    let finished = false;
    let uploaded = false;
    const done = () => {
      if (finished) return;
      finished = true;
      this.#active--;
      signal?.removeEventListener("abort", onAbort);
    };
    const onAbort = () => {
      reader.cancel(signal?.reason);
      if (uploaded) writer.abort(signal?.reason).catch(() => {});
      else abandon(writer);
      done();
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    const fields: [string, string][] = [
      [":method", init.method],
      [":scheme", "https"],
      [":authority", init.authority],
      [":path", init.path],
    ];
    if (init.headers) { for (const f of outgoingFields(init.headers)) fields.push(f); }
    // The body is sent while the response is awaited: a server may answer before reading it.
    const sending = (async () => {
      await writer.write(headersFrame(fields));
      await writeBody(writer, init.body ?? null);
      uploaded = true;
      await writer.close();
    })();
    sending.catch(() => {
      // The request body failed: the server must not take what it got for the whole body.
      if (!uploaded) abandon(writer);
    });
    const ctx: MessageContext = {
      decoder: this.session.decoder,
      streamId,
      role: "client",
      maxHeaderFrame: 2 * this.session.maxFieldSectionSize + 1024,
    };
    try {
      while (true) {
        const section = await readHeaderSection(reader, ctx);
        if (!section) {
          throw new Http3RequestError(
            "the stream ended without a response",
            !this.#processed(streamId),
          );
        }
        const head = parseResponseHead(section);
        if (head.status === 101) throw new Http3Error(0x10e, "stream", "101 is not valid in h3");
        if (head.status < 200) continue; // interim response
        const noBody = init.method === "HEAD" || head.status === 204 || head.status === 304;
        let body: ReadableStream<Uint8Array> | null = null;
        if (noBody) {
          reader.cancel();
          done();
        } else {
          body = bodyStream(reader, ctx, {
            expectedLength: declaredLength(head.headers),
            onError: (err) => {
              this.session.fail(err);
              done();
            },
            onEnd: done,
          });
        }
        return { status: head.status, headers: head.headers, body, streamId };
      }
    } catch (err) {
      reader.cancel();
      if (uploaded) writer.abort().catch(() => {});
      else abandon(writer);
      done();
      if (signal?.aborted) throw signal.reason;
      if (err instanceof Http3Error && err.scope === "connection") this.session.fail(err);
      if (err instanceof Http3RequestError) throw err;
      const processed = !(err instanceof StreamAbortedError) || this.#processed(streamId);
      throw new Http3RequestError(
        `HTTP/3 request failed: ${(err as Error).message}`,
        processed,
        err,
      );
    }
  }

  /** Whether the server may have processed stream `id` (false when a GOAWAY excludes it). */
  #processed(id: number): boolean {
    const g = this.session.goawayReceived;
    return g === null || id < g;
  }

  /** Close the connection (H3_NO_ERROR). */
  close(): void {
    this.session.close();
  }
}

/** Mark a request whose body was not fully sent as malformed, then finish the stream. */
function abandon(writer: WritableStreamDefaultWriter<Uint8Array>): void {
  writer.write(abandonedMarker()).then(() => writer.close()).catch(() => {});
}

/** Await `p` unless `signal` aborts first; a value that arrives late is released with `drop`. */
function abortable<T>(
  p: Promise<T>,
  signal: AbortSignal | undefined,
  drop: (value: T) => void,
): Promise<T> {
  if (!signal) return p;
  if (signal.aborted) {
    p.then(drop, () => {});
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      p.then(drop, () => {});
      reject(signal.reason);
    };
    signal.addEventListener("abort", onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener("abort", onAbort);
        if (signal.aborted) drop(v);
        else resolve(v);
      },
      (e) => {
        signal.removeEventListener("abort", onAbort);
        reject(e);
      },
    );
  });
}
