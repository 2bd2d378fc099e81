/** One request/response exchange on one connection: upload, response head, streamed body. */

import { type BodyDecoder, ChunkedDecoder, CloseDecoder, LengthDecoder } from "./body.ts";
import { type Connection, READ_BUFFER_BYTES } from "./connection.ts";
import { Http1Error } from "./errors.ts";
import type { RequestHead } from "./head.ts";
import type { AbortHook, Http1RequestInit } from "./request.ts";
import { findHeadEnd, parseResponseHead, type ResponseHead } from "./response_head.ts";
import { type RequestBody, SourceError, writeRequest } from "./upload.ts";

/** What an exchange needs from its client. */
export interface ExchangeOptions {
  maxHeaderBytes: number;
  /** Takes back a connection whose response was read completely (the client pools or closes it). */
  release(conn: Connection): void;
  /**
   * Sends the request again on a new connection: a reused one closed before any response byte
   * and the body can be replayed. Throws `error` when the client will not.
   */
  retry(
    url: URL,
    origin: string,
    init: Http1RequestInit,
    head: RequestHead,
    error: unknown,
  ): Promise<Http1Response>;
}

/**
 * A response as the client hands it out: cheaper than a `Response` (no Headers validation, no
 * stream around a body that is already complete), which a proxy would only take apart again.
 */
export interface Http1Response {
  status: number;
  statusText: string;
  /** End-to-end fields as received, `[name, value, name, value, …]` (hop-by-hop left out). */
  fields: string[];
  /** The whole body when it came with the head, a stream when it is still arriving, or null. */
  body: Uint8Array<ArrayBuffer> | ReadableStream<Uint8Array> | null;
}

// The exchange whose promise is being made: its executor is one module function, not a closure.
let starting: Exchange | null = null;

function startExchange(
  resolve: (response: Http1Response | Promise<Http1Response>) => void,
  reject: (error: unknown) => void,
): void {
  const exchange = starting!;
  starting = null;
  exchange.resolve = resolve;
  exchange.reject = reject;
}

/** One request and its response on one connection. */
export class Exchange {
  readonly conn: Connection;
  readonly url: URL;
  /** The pool's key of the connection's origin. */
  readonly origin: string;
  readonly init: Http1RequestInit;
  readonly head: RequestHead;
  /** The connection came from the pool (a failure before any answer may be retried). */
  readonly reused: boolean;
  readonly signal: AbortHook | undefined;
  readonly options: ExchangeOptions;
  /** Neither side asked to close. */
  keepAlive: boolean;
  /** The whole request was written. */
  uploaded = false;
  sourceError: unknown = null;
  /** Writing the request to the socket failed. */
  writeError: unknown = null;
  /** A response byte arrived (before that, a failure on a reused socket may be retried). */
  received = false;
  finished = false;
  controller: ReadableStreamDefaultController<Uint8Array> | null = null;
  /** Bytes of an incomplete head already searched for its end. */
  scanned = 0;
  /** Settle the promise run() returned. */
  resolve!: (response: Http1Response | Promise<Http1Response>) => void;
  reject!: (error: unknown) => void;

  constructor(
    conn: Connection,
    url: URL,
    origin: string,
    init: Http1RequestInit,
    head: RequestHead,
    reused: boolean,
    options: ExchangeOptions,
  ) {
    this.conn = conn;
    this.url = url;
    this.origin = origin;
    this.init = init;
    this.head = head;
    this.reused = reused;
    this.signal = init.signal;
    this.options = options;
    this.keepAlive = !head.close;
    // The exchange is its own listener (handleEvent): no closure per request.
    this.signal?.addEventListener("abort", this);
  }

  /** The signal aborted. */
  handleEvent(): void {
    this.controller?.error(this.signal!.reason);
    this.finish(false);
  }

  /**
   * Sends the request and resolves with the response once its final head is parsed (1xx
   * informational heads are skipped). No async frame: a promise settled by the reads' callbacks,
   * which are the connection's own functions (made once per socket, not per request).
   */
  run(): Promise<Http1Response> {
    // Aborted while connecting, after the connect had already succeeded: the event is gone.
    if (this.signal?.aborted) {
      this.finish(false);
      return Promise.reject(this.signal.reason);
    }
    // The body goes out while the response is awaited: a server may answer before reading it.
    this.upload(this.head, this.init.body);
    starting = this;
    const answer = new Promise<Http1Response>(startExchange);
    this.step();
    return answer;
  }

  /** Settles the answer with the final head once it is buffered, else reads more. */
  step(): void {
    let head: ResponseHead | null;
    try {
      head = this.bufferedHead();
      if (head === null) {
        const conn = this.conn;
        conn.reading = this;
        conn.readHead(this.options.maxHeaderBytes + READ_BUFFER_BYTES);
        return;
      }
    } catch (error) {
      this.fail(error);
      return;
    }
    // respond() reports its own errors (and is never retried).
    let response: Http1Response;
    try {
      response = this.respond(this.init.method, head);
    } catch (error) {
      this.reject(error);
      return;
    }
    this.resolve(response);
  }

  /** A read of the head returned `n` bytes (null: the peer closed). */
  headRead(n: number | null): void {
    // A pooled socket keeps no finished request alive.
    this.conn.reading = null;
    if (!this.conn.filled(n)) {
      this.fail(
        this.received
          ? new Http1Error("the connection closed in the middle of the response head", "protocol")
          : new Http1Error("the connection closed before any response byte", "connection_closed"),
      );
      return;
    }
    this.received = true;
    this.step();
  }

  /**
   * The final response head when it is in the buffer (1xx heads before it are consumed), or null
   * when more bytes are needed.
   */
  bufferedHead(): ResponseHead | null {
    const conn = this.conn;
    const max = this.options.maxHeaderBytes;
    while (conn.end > conn.start) {
      // Resume the search a few bytes back: the blank line may straddle two reads.
      const end = findHeadEnd(conn.buf, conn.start + Math.max(0, this.scanned - 3), conn.end);
      if (end === -1) {
        this.scanned = conn.end - conn.start;
        if (this.scanned > max) throw headTooLarge(max);
        return null;
      }
      if (end - conn.start > max) throw headTooLarge(max);
      const parsed = parseResponseHead(conn.buf, conn.start, end);
      conn.start = end;
      if (parsed.status >= 200) return parsed;
      if (parsed.status === 101) {
        throw new Http1Error(
          "unexpected 101 Switching Protocols (upgrades are not supported)",
          "protocol",
        );
      }
      this.scanned = 0;
    }
    return null;
  }

  /**
   * The head could not be read: the answer rejects with the failure, or, for a reused socket
   * that closed before any response byte with a body that can be sent again, it is the retry's.
   */
  fail(error: unknown): void {
    this.conn.reading = null;
    this.finish(false);
    const failure = this.failure(error);
    if (
      this.reused && failure instanceof Http1Error && failure.code === "connection_closed" &&
      !(this.init.body instanceof ReadableStream) && !this.signal?.aborted
    ) {
      try {
        this.resolve(this.options.retry(this.url, this.origin, this.init, this.head, failure));
      } catch (retryError) {
        this.reject(retryError);
      }
      return;
    }
    this.reject(failure);
  }

  /** Writes the request; a failure is kept for {@link failure} and closes the socket. */
  upload(head: RequestHead, body: RequestBody): void {
    if (body !== null) {
      this.uploadBody(head, body);
      return;
    }
    // The usual GET: the head alone, straight to the socket, settled by the connection's
    // callbacks (no frame or closure of ours).
    const conn = this.conn;
    conn.writing = this;
    conn.conn.write(head.bytes).then(conn.onWritten, conn.onWriteFailed);
  }

  /** The head's write took `n` bytes: the rest (rare) goes in further writes. */
  headWritten(n: number): void {
    this.conn.writing = null;
    const bytes = this.head.bytes;
    if (n < bytes.byteLength) this.uploadBody(this.head, bytes.subarray(n), true);
    else this.uploaded = true;
  }

  /** Writing the request failed: kept for {@link failure}; the socket is closed. */
  writeFailed(error: unknown): void {
    this.conn.writing = null;
    if (error instanceof SourceError) this.sourceError = error.error;
    else this.writeError = error;
    this.conn.destroy();
  }

  /** Writes a request with a body (or, `rest`, the bytes of a head a write left over). */
  async uploadBody(
    head: RequestHead,
    body: ReadableStream<Uint8Array> | Uint8Array,
    rest = false,
  ): Promise<void> {
    try {
      if (rest) await this.conn.write(body as Uint8Array);
      else await writeRequest(this.conn, head, body);
      this.uploaded = true;
    } catch (error) {
      this.writeFailed(error);
    }
  }

  respond(method: string, head: ResponseHead): Http1Response {
    const { status } = head;
    let decoder: BodyDecoder | null;
    try {
      if (status > 599) throw new Http1Error(`unsupported response status ${status}`, "protocol");
      if (head.close) this.keepAlive = false;
      if (method === "HEAD" || status === 204 || status === 304) decoder = null;
      else if (status === 205) {
        // 205 must not carry content; if it announces some, do not trust the socket after it.
        if (head.contentLength > 0 || head.transferCoding !== null) this.keepAlive = false;
        decoder = null;
      } else if (head.transferCoding !== null) {
        decoder = head.transferCoding === "chunked"
          ? new ChunkedDecoder(this.options.maxHeaderBytes)
          : new CloseDecoder();
      } else if (head.contentLength >= 0) decoder = new LengthDecoder(head.contentLength);
      else decoder = new CloseDecoder();

      if (decoder === null) {
        const response = rawResponse(null, head);
        this.finish(true);
        return response;
      }
      const first = decoder.take(this.conn);
      if (decoder.done) {
        // The whole body was in the buffer: the socket goes back to the pool before we return.
        const response = rawResponse(first ?? new Uint8Array(0), head);
        this.finish(decoder.reusable);
        return response;
      }
      const body = new ReadableStream<Uint8Array>({
        start: (controller) => {
          this.controller = controller;
          if (first) controller.enqueue(first);
        },
        pull: (controller) => this.pull(controller, decoder!),
        cancel: () => this.finish(false),
      });
      return rawResponse(body, head);
    } catch (error) {
      this.finish(false);
      if (error instanceof Http1Error) throw error;
      throw new Http1Error(`invalid response head: ${(error as Error).message}`, "protocol", {
        cause: error,
      });
    }
  }

  /** Hands out the next body chunk; pull-based, so at most one buffer is read ahead. */
  async pull(
    controller: ReadableStreamDefaultController<Uint8Array>,
    decoder: BodyDecoder,
  ): Promise<void> {
    const conn = this.conn;
    const max = this.options.maxHeaderBytes + READ_BUFFER_BYTES;
    try {
      for (;;) {
        const chunk = decoder.take(conn);
        if (decoder.done) {
          this.finish(decoder.reusable);
          if (chunk) controller.enqueue(chunk);
          controller.close();
          return;
        }
        if (chunk) return controller.enqueue(chunk);
        if (!conn.filled(await conn.read(max))) decoder.eof();
      }
    } catch (error) {
      const reason = this.failure(error, "reading the response body failed");
      this.finish(false);
      controller.error(reason);
    }
  }

  /** The error a failed exchange rejects with. */
  failure(error: unknown, what = "reading the response failed"): unknown {
    if (this.signal?.aborted) return this.signal.reason;
    if (this.sourceError !== null) return this.sourceError;
    if (error instanceof Http1Error) return error;
    const cause = this.writeError ?? error;
    const message = (cause as Error)?.message ?? String(cause);
    if (this.writeError !== null) what = "writing the request failed";
    if (!this.received) {
      return new Http1Error(
        `the connection closed before any response byte (${message})`,
        "connection_closed",
        { cause },
      );
    }
    return new Http1Error(`${what}: ${message}`, "io", { cause });
  }

  /** Ends the exchange once: the socket goes back to the pool only when all is clean. */
  finish(reusable: boolean): void {
    if (this.finished) return;
    this.finished = true;
    this.controller = null;
    this.signal?.removeEventListener("abort", this);
    const conn = this.conn;
    if (reusable && this.keepAlive && this.uploaded && conn.start === conn.end && !conn.closed) {
      this.options.release(conn);
    } else {
      conn.destroy();
    }
  }
}

/** The response with the head's status and end-to-end fields (the head left hop-by-hop ones out). */
function rawResponse(body: Http1Response["body"], head: ResponseHead): Http1Response {
  return { status: head.status, statusText: head.statusText, fields: head.fields, body };
}

/** A fetch-style `Response` of a raw response (appending beats a HeadersInit conversion). */
export function toFetchResponse(raw: Http1Response): Response {
  const response = new Response(raw.body, { status: raw.status, statusText: raw.statusText });
  const headers = response.headers;
  const fields = raw.fields;
  for (let i = 0; i < fields.length; i += 2) headers.append(fields[i], fields[i + 1]);
  return response;
}

function headTooLarge(max: number): Http1Error {
  return new Http1Error(`the response head is larger than maxHeaderBytes (${max})`, "protocol");
}
