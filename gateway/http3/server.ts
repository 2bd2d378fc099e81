/**
 * An HTTP/3 server on a QUIC endpoint: every request stream of every connection is served
 * concurrently by a Fetch-style handler (`Request` in, `Response` out). Shutdown sends GOAWAY,
 * lets the requests in flight finish (bounded), then closes the connections with H3_NO_ERROR.
 */
import { H3, Http3Error } from "./errors.ts";
import { bodyStream, type MessageContext, readHeaderSection } from "./message_stream.ts";
import { declaredLength, outgoingFields, parseRequestHead, type RequestHead } from "./message.ts";
import { BodySourceError, headersFrame, writeBody } from "./message_writer.ts";
import { Http3Session } from "./session.ts";
import { FrameStreamReader, StreamAbortedError } from "./stream_reader.ts";

/** Where a request came from. */
export interface Http3RequestInfo {
  remoteAddr: Deno.NetAddr;
  /** QUIC stream id of the request. */
  streamId: number;
}

/** Serves one request. */
export type Http3Handler = (
  request: Request,
  info: Http3RequestInfo,
) => Response | Promise<Response>;

/** Options of an HTTP/3 server. */
export interface Http3ServerOptions {
  hostname: string;
  port: number;
  /** PEM certificate chain and key (TLS 1.3, ALPN h3). */
  cert: string;
  key: string;
  handler: Http3Handler;
  /** SETTINGS_MAX_FIELD_SECTION_SIZE announced and enforced (default 64 KiB). */
  maxFieldSectionSize?: number;
  /** Concurrent request streams per connection (default 100). */
  maxConcurrentStreams?: number;
  /** Idle timeout of a connection in ms (default 30 s). */
  idleTimeoutMs?: number;
  /** Told about protocol errors and handler failures (for logs). */
  onError?(err: unknown, where: string): void;
  /**
   * Listen on this endpoint (handed over by a server being replaced) instead of binding a new
   * one: a certificate change on reload keeps the UDP socket and its connections.
   */
  endpoint?: Deno.QuicEndpoint;
}

/** Default SETTINGS_MAX_FIELD_SECTION_SIZE. */
export const DEFAULT_MAX_FIELD_SECTION_SIZE = 64 * 1024;

/** How long a drained connection stays open for its last responses to arrive. */
const LINGER_MS = 250;

const NO_BODY_METHODS = new Set(["GET", "HEAD"]);
const NO_BODY_STATUS = new Set([204, 205, 304]);

/** A running HTTP/3 server. */
export class Http3Server {
  readonly endpoint: Deno.QuicEndpoint;
  readonly #listener: Deno.QuicListener;
  readonly #opts: Http3ServerOptions;
  readonly #connections = new Set<ServerConnection>();
  #stopping = false;
  #ownsEndpoint = true;
  #successor: Http3Server | undefined;
  #accepting: Promise<void>;

  constructor(opts: Http3ServerOptions) {
    this.#opts = opts;
    this.endpoint = opts.endpoint ??
      new Deno.QuicEndpoint({ hostname: opts.hostname, port: opts.port });
    try {
      this.#listener = this.endpoint.listen({
        cert: opts.cert,
        key: opts.key,
        alpnProtocols: ["h3"],
        maxConcurrentBidirectionalStreams: opts.maxConcurrentStreams ?? 100,
        maxIdleTimeout: opts.idleTimeoutMs ?? 30_000,
      });
    } catch (err) {
      if (!opts.endpoint) this.endpoint.close();
      throw err;
    }
    this.#accepting = this.#accept();
  }

  /**
   * Stop accepting connections and give the endpoint to a successor server; this server keeps
   * its connections until `shutdown()` drains them, and then leaves the endpoint open.
   */
  handOver(): Deno.QuicEndpoint {
    this.#ownsEndpoint = false;
    this.#stopping = true;
    return this.endpoint;
  }

  /**
   * After `handOver()`: connections that still reach this server's accept loop (Deno's listener
   * cannot cancel an accept in progress) go to `successor`.
   */
  forwardTo(successor: Http3Server): void {
    this.#successor = successor;
  }

  /** Serve a connection received by another server's accept loop. */
  adopt(incoming: Deno.QuicIncoming): void {
    void this.#connect(incoming);
  }

  /** The bound UDP address. */
  get addr(): Deno.NetAddr {
    return this.endpoint.addr;
  }

  /** Open connections (for tests and metrics). */
  get connectionCount(): number {
    return this.#connections.size;
  }

  /** Requests being served. */
  get inFlight(): number {
    let n = 0;
    for (const c of this.#connections) n += c.inFlight;
    return n;
  }

  async #accept(): Promise<void> {
    while (true) {
      let incoming: Deno.QuicIncoming;
      try {
        incoming = await this.#listener.incoming();
      } catch {
        return; // listener stopped
      }
      if (this.#successor) this.#successor.adopt(incoming);
      else if (this.#stopping) incoming.refuse();
      else void this.#connect(incoming);
    }
  }

  async #connect(incoming: Deno.QuicIncoming): Promise<void> {
    let conn: Deno.QuicConn;
    try {
      conn = await incoming.accept();
    } catch (err) {
      this.#opts.onError?.(err, "handshake");
      return;
    }
    if (this.#stopping) {
      conn.close({ closeCode: H3.NO_ERROR, reason: "shutting down" });
      return;
    }
    const c = new ServerConnection(conn, this.#opts);
    this.#connections.add(c);
    c.session.closed.then(() => this.#connections.delete(c));
    await c.run();
  }

  /**
   * Stop accepting, send GOAWAY on every connection, wait up to `drainMs` for the requests in
   * flight, then close every connection and the endpoint.
   */
  async shutdown(drainMs = 10_000): Promise<void> {
    if (this.#shutdown) return await this.#shutdown;
    this.#shutdown = this.#drain(drainMs);
    await this.#shutdown;
  }

  #shutdown: Promise<void> | undefined;

  async #drain(drainMs: number): Promise<void> {
    this.#stopping = true;
    if (this.#ownsEndpoint) {
      try {
        this.#listener.stop();
      } catch {
        // already stopped
      }
    }
    const conns = [...this.#connections];
    await Promise.all(conns.map((c) => c.goaway()));
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      Promise.all(conns.map((c) => c.drained())),
      new Promise((r) => timer = setTimeout(r, drainMs)),
    ]);
    clearTimeout(timer);
    // A finished response may still be in flight (QUIC has no flush for it): give clients a
    // moment to read it and close on their own, which clients do after GOAWAY once idle.
    await Promise.race([
      Promise.all(conns.map((c) => c.session.closed)),
      new Promise((r) => timer = setTimeout(r, LINGER_MS)),
    ]);
    clearTimeout(timer);
    for (const c of conns) c.session.close(H3.NO_ERROR, "shutdown");
    if (this.#ownsEndpoint) {
      // Give the CONNECTION_CLOSE frames a moment to leave before the socket goes away.
      await new Promise((r) => setTimeout(r, 20));
      try {
        this.endpoint.close({ closeCode: H3.NO_ERROR, reason: "shutdown" });
      } catch {
        // already closed
      }
      await this.#accepting;
    }
  }
}

/** The server side of one connection. */
class ServerConnection {
  readonly session: Http3Session;
  readonly #opts: Http3ServerOptions;
  readonly #remote: Deno.NetAddr;
  #inFlight = new Set<Promise<void>>();
  #maxStreamId = -4;
  #goawayId: number | null = null;
  #idle: (() => void) | undefined;

  constructor(conn: Deno.QuicConn, opts: Http3ServerOptions) {
    this.#opts = opts;
    this.#remote = conn.remoteAddr;
    this.session = new Http3Session(conn, {
      role: "server",
      maxFieldSectionSize: opts.maxFieldSectionSize ?? DEFAULT_MAX_FIELD_SECTION_SIZE,
      onConnectionError: (err) => opts.onError?.(err, "connection"),
    });
  }

  get inFlight(): number {
    return this.#inFlight.size;
  }

  async run(): Promise<void> {
    try {
      await this.session.open();
    } catch (err) {
      this.session.fail(err);
      return;
    }
    const streams = this.session.conn.incomingBidirectionalStreams.getReader();
    try {
      while (true) {
        const { done, value } = await streams.read();
        if (done) break;
        this.#track(this.#serve(value));
      }
    } catch {
      // connection closed
    } finally {
      streams.releaseLock();
    }
  }

  #track(p: Promise<void>): void {
    this.#inFlight.add(p);
    p.finally(() => {
      this.#inFlight.delete(p);
      if (this.#inFlight.size === 0) this.#idle?.();
    });
  }

  /** Send GOAWAY naming the first request stream that will not be served. */
  async goaway(): Promise<void> {
    this.#goawayId = this.#maxStreamId + 4;
    await this.session.sendGoaway(this.#goawayId);
  }

  /** Resolves when no request is in flight. */
  drained(): Promise<void> {
    if (this.#inFlight.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle = resolve);
  }

  async #serve(stream: Deno.QuicBidirectionalStream): Promise<void> {
    const streamId = Number(stream.readable.id);
    const reader = new FrameStreamReader(stream.readable);
    const writer = stream.writable.getWriter();
    if (this.#goawayId !== null && streamId >= this.#goawayId) {
      // After GOAWAY: not processed, the client may retry it elsewhere (RFC 9114 §5.2).
      reader.cancel();
      writer.close().catch(() => {});
      return;
    }
    if (streamId > this.#maxStreamId) this.#maxStreamId = streamId;
    const ctx: MessageContext = {
      decoder: this.session.decoder,
      streamId,
      role: "server",
      maxHeaderFrame: 2 * this.session.maxFieldSectionSize + 1024,
    };
    const abort = new AbortController();
    try {
      let fields;
      try {
        fields = await readHeaderSection(reader, ctx);
      } catch (err) {
        if (!(err instanceof Http3Error) || err.scope !== "stream") throw err;
        // A header section over our limits: answer 431 rather than only dropping the stream.
        reader.cancel();
        await this.#respond(writer, errorResponse(err), "GET", abort);
        return;
      }
      if (!fields) {
        // The stream ended before a request: H3_REQUEST_INCOMPLETE, nothing to answer.
        writer.close().catch(() => {});
        return;
      }
      let head: RequestHead;
      let request: Request;
      try {
        head = parseRequestHead(fields);
        request = this.#request(head, reader, ctx, abort);
      } catch (err) {
        reader.cancel();
        await this.#respond(writer, errorResponse(err), "GET", abort);
        return;
      }
      let response: Response;
      try {
        response = await this.#opts.handler(request, { remoteAddr: this.#remote, streamId });
      } catch (err) {
        this.#opts.onError?.(err, "handler");
        response = errorResponse(err);
      }
      await this.#respond(writer, response, head.method, abort);
    } catch (err) {
      abort.abort(err);
      this.#streamFailed(err, reader, writer);
    }
  }

  #request(
    head: RequestHead,
    reader: FrameStreamReader,
    ctx: MessageContext,
    abort: AbortController,
  ): Request {
    const url = head.method === "CONNECT"
      ? `https://${head.authority}/`
      : `${head.scheme === "http" ? "http" : "https"}://${head.authority}${head.path}`;
    const body = bodyStream(reader, ctx, {
      expectedLength: declaredLength(head.headers),
      onError: (err) => {
        this.session.fail(err);
        abort.abort(err);
      },
    });
    const withBody = !NO_BODY_METHODS.has(head.method);
    if (!withBody) {
      // A GET or HEAD has no body to hand on: read the stream to its end anyway, so that a reset
      // or a malformed frame is noticed.
      body.pipeTo(new WritableStream()).catch(() => {});
    }
    return new Request(url, {
      method: head.method,
      headers: head.headers,
      body: withBody ? body : null,
      signal: abort.signal,
      // @ts-ignore: Deno accepts duplex for streaming request bodies
      duplex: "half",
    });
  }

  async #respond(
    writer: WritableStreamDefaultWriter<Uint8Array>,
    response: Response,
    method: string,
    abort: AbortController,
  ): Promise<void> {
    const fields: [string, string][] = [[":status", String(response.status)]];
    for (const f of outgoingFields(response.headers)) fields.push(f);
    const withBody = method !== "HEAD" && !NO_BODY_STATUS.has(response.status);
    try {
      await writer.write(headersFrame(fields));
      if (withBody) await writeBody(writer, response.body);
      else response.body?.cancel().catch(() => {});
      await writer.close();
    } catch (err) {
      // The client stopped reading (STOP_SENDING) or the body failed: the request is over.
      abort.abort(err);
      response.body?.cancel().catch(() => {});
      if (err instanceof BodySourceError && !response.headers.has("content-length")) {
        // Without RESET_STREAM (see abandonedMarker) a truncated response of unknown length
        // could pass for complete: close the connection, as HTTP/1.1 would close its socket.
        throw new Http3Error(H3.INTERNAL_ERROR, "connection", err.message);
      }
      throw new StreamAbortedError(err);
    }
  }

  #streamFailed(
    err: unknown,
    reader: FrameStreamReader,
    writer: WritableStreamDefaultWriter<Uint8Array>,
  ): void {
    reader.cancel();
    writer.abort().catch(() => {});
    if (err instanceof Http3Error && err.scope === "connection") this.session.fail(err);
    else if (!(err instanceof StreamAbortedError) && !(err instanceof Http3Error)) {
      this.#opts.onError?.(err, "stream");
    }
  }
}

/** A JSON error response for a request that could not be served. */
function errorResponse(err: unknown): Response {
  const malformed = err instanceof Http3Error || err instanceof TypeError;
  const tooLarge = err instanceof Http3Error && err.code === H3.EXCESSIVE_LOAD;
  const status = tooLarge ? 431 : malformed ? 400 : 500;
  const code = tooLarge
    ? "request_header_fields_too_large"
    : malformed
    ? "malformed_request"
    : "internal_error";
  const message = err instanceof Error ? err.message : String(err);
  return Response.json({ error: { code, message } }, { status });
}
