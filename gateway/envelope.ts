/**
 * RequestEnvelope / ResponseEnvelope: the protocol-neutral pair every adapter converts to and from.
 *
 * The body is lazy. It starts as the protocol's byte stream; `data()` parses it on first access
 * with the codec of its content type, and only a `setData()` makes the envelope serialize it back.
 * A pipeline where nobody touches the data forwards the original stream: no parse, no copy.
 */
import type { ContentLimits } from "../shared/gateway_config/mod.ts";
import { DEFAULT_SPOOL_THRESHOLD } from "../shared/gateway_config/mod.ts";
import { DEFAULT_CONTENT_LIMITS } from "../shared/gateway_config/mod.ts";
import {
  type BodyFormat,
  decodeBody,
  encodeData,
  formatOf,
  parseMediaType,
  utf8JsonContentType,
} from "./codecs/mod.ts";
import { GatewayError } from "./errors.ts";
import { concatChunks, readChunks } from "./body_read.ts";
import type { BodyLease } from "./memory/mod.ts";
import { readOrSpool, type SpoolFile } from "./spool.ts";

/** What is known of a body's content. */
export interface ContentInfo {
  /** Media type without parameters (`application/json`), or null when none was sent. */
  media_type: string | null;
  /** The `charset` parameter, when sent. */
  charset?: string;
  /** How the body is normalized to `data`. */
  format: BodyFormat;
  /** Size in bytes, when known. */
  size?: number;
  /** SHA-256 of the bytes (hex), when it was asked for. */
  sha256?: string;
}

const ENCODER = new TextEncoder();

/** Raw body material accepted by `Body`. */
export type BodySource = ReadableStream<Uint8Array> | Uint8Array | null;

/** A body that is read, parsed and serialized only on demand. */
export class Body {
  #stream: ReadableStream<Uint8Array> | null;
  #bytes: Uint8Array | null;
  #data: unknown = undefined;
  #decoded = false;
  #dirty = false;
  #taken = false;
  #contentType: string | null;
  #givenLimits: ContentLimits;
  #declaredLength: number | null;
  #sha256: string | undefined;
  #limitStream: boolean;
  #streamError: unknown = undefined;
  /** The error of a body over `max_body_size` (413 for requests, 502 for upstream answers). */
  #overLimitError: (limit: number) => GatewayError = tooLarge;
  /** limitAsUpstream's limit, until a read needs the limits made of it (most answers never do). */
  #upstreamLimit: number | undefined;
  /** The backend whose answer this is (limitAsUpstream), for a timeout while reading it. */
  #upstream: string | undefined;
  /** A body spooled to a file (makeReplayable): each forwardable() reads it anew. */
  #spool: SpoolFile | null = null;
  /** The memory budget lease of the request this body belongs to (gateway/memory). */
  #lease: BodyLease | undefined;
  /** Bytes of this body counted on the lease. */
  #charged = 0;
  /** False for an answer: counted, never refused (its backend has already acted). */
  #refusable = true;

  /**
   * `limitStream` false lets a forwarded stream pass whatever its size (responses); the limits
   * still bound what is buffered for parsing.
   */
  constructor(
    source: BodySource,
    contentType: string | null,
    limits: ContentLimits = DEFAULT_CONTENT_LIMITS,
    declaredLength: number | null = null,
    limitStream = true,
  ) {
    this.#limitStream = limitStream;
    this.#stream = source instanceof ReadableStream ? source : null;
    this.#bytes = source instanceof Uint8Array ? source : null;
    this.#contentType = contentType;
    this.#givenLimits = limits;
    this.#declaredLength = source instanceof Uint8Array ? source.byteLength : declaredLength;
  }

  /**
   * Marks this as an upstream's answer: over `max_body_size` it is a 502
   * `upstream_response_too_large` naming `backend`, whether it is buffered or forwarded (a
   * stream of unknown length is cut where it passes the limit).
   */
  limitAsUpstream(backend: string, limit: number): void {
    this.#limitStream = true;
    this.#upstream = backend;
    this.#upstreamLimit = limit;
  }

  /** The limits in force: limitAsUpstream's, made on first use. */
  get #limits(): ContentLimits {
    const limit = this.#upstreamLimit;
    if (limit !== undefined) {
      this.#upstreamLimit = undefined;
      const backend = this.#upstream;
      this.#givenLimits = { ...this.#givenLimits, max_body_size: limit };
      this.#overLimitError = (max) =>
        new GatewayError(
          502,
          "upstream_response_too_large",
          `backend ${backend} answered more than its limit of ${max} bytes`,
        );
    }
    return this.#givenLimits;
  }

  /** The error of a body over the limit in force. */
  get #overLimit(): (limit: number) => GatewayError {
    this.#limits; // makes limitAsUpstream's error maker, when it is pending
    return this.#overLimitError;
  }

  /**
   * Counts what this body holds in memory for parsing on `lease` (the request's share of its
   * isolate's memory budget) from now on; a body already counted elsewhere keeps its lease.
   */
  chargeTo(lease: BodyLease | undefined, refusable = true): void {
    if (this.#lease !== undefined) return;
    this.#lease = lease;
    this.#refusable = refusable;
  }

  /**
   * Counts `total` bytes of this body on its lease (the part not counted yet), or throws the
   * 503 `memory_pressure` when they do not fit.
   */
  #charge(total: number): void {
    if (this.#lease === undefined || total <= this.#charged) return;
    this.#lease.take(total - this.#charged, this.#refusable);
    this.#charged = total;
  }

  /** An empty body. */
  static empty(limits: ContentLimits = DEFAULT_CONTENT_LIMITS): Body {
    return new Body(null, null, limits);
  }

  /** A body holding normalized data, serialized as JSON when forwarded. */
  static fromData(data: unknown, contentType = "application/json"): Body {
    const body = new Body(null, contentType);
    body.setData(data);
    return body;
  }

  /** The Content-Type of the body as it will be forwarded. */
  get contentType(): string | null {
    return this.#contentType;
  }

  /** The length in bytes when known without reading (declared or buffered). */
  get knownLength(): number | null {
    if (this.#dirty) return null;
    if (this.#spool && !this.#bytes) return this.#spool.size;
    return this.#bytes ? this.#bytes.byteLength : this.#declaredLength;
  }

  /** True when a middleware replaced the data. */
  get dataChanged(): boolean {
    return this.#dirty;
  }

  /** True while the body is an unread stream (bytes still to come from its source). */
  get streaming(): boolean {
    return this.#stream !== null && !this.#taken;
  }

  /** True when there is nothing to read. */
  get isEmpty(): boolean {
    return !this.#dirty && this.#stream === null && this.#spool === null &&
      (this.#bytes === null || this.#bytes.byteLength === 0);
  }

  /** The normalized format of the body, from its content type. */
  /** How the body is normalized to `data`, from its content type. */
  get format(): BodyFormat {
    if (this.isEmpty) return "none";
    return formatOf(this.#contentType);
  }

  /** The limits enforced on this body. */
  get limits(): ContentLimits {
    return this.#limits;
  }

  /** Read the whole body (bounded by `max_body_size`; 413 beyond it). */
  async bytes(): Promise<Uint8Array> {
    if (this.#dirty) {
      const encoded = encodeData(this.#data, this.#contentType);
      this.#bytes = encoded.bytes;
      this.#contentType = encoded.contentType;
      this.#dirty = false;
      this.#decoded = true;
      this.#sha256 = undefined;
    }
    if (this.#bytes) return this.#bytes;
    if (this.#spool) return (this.#bytes = await Deno.readFile(this.#spool.path));
    if (!this.#stream) return (this.#bytes = new Uint8Array(0));
    if (this.#taken) throw new Error("body stream was already forwarded");
    this.#taken = true;
    const stream = this.#stream;
    // Admission: a body of declared length is counted (or refused) before a byte of it is read.
    if (this.#declaredLength !== null && this.#declaredLength <= this.#limits.max_body_size) {
      try {
        this.#charge(this.#declaredLength);
      } catch (err) {
        this.#stream = null;
        stream.cancel().catch(() => {});
        throw err;
      }
    }
    const chunks: Uint8Array[] = [];
    let total = 0;
    try {
      // A client's body must arrive within body_timeout_secs (an upstream's is bounded by the
      // backend's timeout_secs instead).
      const deadline = this.#upstream ? undefined : (this.#limits.body_timeout_secs ?? 60) * 1000;
      total = await readChunks(
        stream,
        this.#limits.max_body_size,
        (chunk, sum) => {
          chunks.push(chunk);
          // One of unknown length is counted as it arrives.
          this.#charge(sum);
        },
        this.#overLimit,
        deadline,
      );
    } catch (err) {
      throw this.#upstream ? this.#upstreamReadError(err, chunks) : err;
    }
    this.#bytes = concatChunks(chunks, total);
    this.#stream = null;
    return this.#bytes;
  }

  /**
   * What a failure to read an upstream's answer is: cut by the backend's deadline (which covers
   * its whole answer), a 504; broken off by the upstream, a 502 `upstream_body_failed`; a limit
   * or the memory budget, its own error.
   */
  #upstreamReadError(err: unknown, chunks: Uint8Array[]): unknown {
    if (err instanceof GatewayError) return err;
    if ((err as Error)?.name === "TimeoutError") {
      return new GatewayError(
        504,
        "backend_timeout",
        `backend ${this.#upstream} did not finish its answer within its timeout_secs`,
      );
    }
    // The client left (the backend call was aborted with it): not the upstream's failure.
    if ((err as Error)?.name === "AbortError") return err;
    let received = 0;
    for (const c of chunks) received += c.byteLength;
    return upstreamBodyFailed(this.#upstream!, received, err);
  }

  /**
   * Makes the body readable more than once (a pipeline's tee destinations each send it): an
   * unread stream up to `spool_threshold` bytes is read into memory, a larger one into a
   * temporary file (gateway/spool.ts) that every forwardable() reopens, within `max_body_size`
   * and `body_timeout_secs` as bytes() is. Returns the file's path, for the caller to remove once
   * the last reader is done, or null when nothing went to disk.
   */
  async makeReplayable(): Promise<string | null> {
    if (!this.streaming) return null;
    this.#taken = true;
    const stream = this.#stream!;
    this.#stream = null;
    const spooled = await readOrSpool(stream, {
      threshold: this.#limits.spool_threshold ?? DEFAULT_SPOOL_THRESHOLD,
      limit: this.#limits.max_body_size,
      overLimit: this.#overLimit,
      deadlineMs: (this.#limits.body_timeout_secs ?? 60) * 1000,
    });
    if ("bytes" in spooled) {
      this.#bytes = spooled.bytes;
      // At most spool_threshold bytes: counted once they are here.
      this.#charge(spooled.bytes.byteLength);
      return null;
    }
    this.#spool = spooled.file;
    return spooled.file.path;
  }

  /** True when each forwardable() stream is a fresh one (a spooled body), so it can be resent. */
  get replayable(): boolean {
    return this.#spool !== null;
  }

  /** The body as text (UTF-8). */
  async text(): Promise<string> {
    return new TextDecoder().decode(await this.bytes());
  }

  /** The normalized data, parsed on first access by the codec of the content type. */
  async data(): Promise<unknown> {
    if (this.#decoded || this.#dirty) return this.#data;
    const bytes = await this.bytes();
    // A body read ahead (a small one) is counted when it is parsed.
    this.#charge(bytes.byteLength);
    this.#data = bytes.byteLength === 0 ? null : await decodeBody(
      bytes,
      this.#contentType,
      this.#limits,
    );
    this.#decoded = true;
    return this.#data;
  }

  /**
   * The bytes of a UTF-8 JSON body that nothing has parsed or replaced yet (read now if need
   * be), for work that can be done on the bytes themselves; null otherwise.
   */
  async unparsedJson(): Promise<Uint8Array | null> {
    if (this.#decoded || this.#dirty || this.isEmpty) return null;
    if (this.#utf8JsonType() === null) return null;
    return await this.bytes();
  }

  /** {@link unparsedJson} when the body is already in memory (prefetched), else null. */
  bufferedUnparsedJson(): Uint8Array | null {
    const bytes = this.#bytes;
    if (bytes === null || bytes.byteLength === 0 || this.#decoded || this.#dirty) return null;
    return this.#utf8JsonType() === null ? null : bytes;
  }

  /** Replace a UTF-8 JSON body (see `unparsedJson`) with other UTF-8 JSON bytes. */
  setJsonBytes(bytes: Uint8Array): void {
    const contentType = this.#utf8JsonType();
    if (contentType === null) throw new Error("setJsonBytes on a body that is not UTF-8 JSON");
    this.#contentType = contentType;
    this.#bytes = bytes;
    this.#stream = null;
    this.#spool = null;
    this.#data = undefined;
    this.#decoded = false;
    this.#dirty = false;
    this.#sha256 = undefined;
  }

  /** utf8JsonContentType of the current content type. */
  #utf8JsonType(): string | null {
    return utf8JsonContentType(this.#contentType);
  }

  /** Replace the normalized data; the body is serialized from it when forwarded. */
  setData(value: unknown, contentType?: string): void {
    this.#data = value;
    this.#dirty = true;
    this.#decoded = true;
    this.#bytes = null;
    this.#stream = null;
    this.#spool = null;
    this.#sha256 = undefined;
    if (contentType) this.#contentType = contentType;
  }

  /**
   * The body to forward: the original stream when nothing read it (bounded by `max_body_size`),
   * else bytes. A stream can be taken once; callers that need it twice read `bytes()` first.
   */
  forwardable(): BodySource {
    if (this.#dirty) {
      const encoded = encodeData(this.#data, this.#contentType);
      this.#contentType = encoded.contentType;
      this.#bytes = encoded.bytes;
      this.#dirty = false;
      return encoded.bytes;
    }
    if (this.#bytes) return this.#bytes;
    // Opened synchronously (one syscall): the file streams on Deno's native path, like a client's.
    if (this.#spool) return Deno.openSync(this.#spool.path, { read: true }).readable;
    if (!this.#stream) return null;
    if (this.#taken) throw new Error("body stream was already forwarded");
    this.#taken = true;
    const stream = this.#stream;
    this.#stream = null;
    if (!this.#limitStream) return stream;
    // A declared length within the limit is enforced by the HTTP server itself (a body cannot
    // outgrow its Content-Length), and the untouched stream stays on Deno's native path: its
    // chunks never enter JavaScript, so a large upload costs no heap or GC-lagged memory.
    if (this.#declaredLength !== null && this.#declaredLength <= this.#limits.max_body_size) {
      return stream;
    }
    return stream.pipeThrough(
      limitStream(this.#limits.max_body_size, (err) => this.#streamError = err, this.#overLimit),
    );
  }

  /**
   * The error that stopped a forwarded stream (413 over the limit), if any. A client of the
   * stream (fetch) reports its own generic error; this says what really happened.
   */
  get streamError(): unknown {
    return this.#streamError;
  }

  /** Content information; `size` and `sha256` are filled once the body has been read. */
  async info(withChecksum = false): Promise<ContentInfo> {
    const mt = parseMediaType(this.#contentType);
    const info: ContentInfo = {
      media_type: mt?.type ?? null,
      format: this.format,
    };
    if (mt?.params.charset) info.charset = mt.params.charset;
    const length = this.knownLength;
    if (length !== null) info.size = length;
    if (withChecksum) {
      const bytes = await this.bytes();
      info.size = bytes.byteLength;
      this.#sha256 ??= await sha256Hex(bytes);
      info.sha256 = this.#sha256;
    }
    return info;
  }
}

/** Hex SHA-256 of bytes. */
export async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes as BufferSource));
  let out = "";
  for (const b of digest) out += b.toString(16).padStart(2, "0");
  return out;
}

/**
 * The 502 `upstream_body_failed` of an upstream answer that broke off after `received` bytes
 * (the connection closed or failed before its declared end).
 */
export function upstreamBodyFailed(
  backend: string,
  received: number,
  cause: unknown,
): GatewayError {
  return new GatewayError(
    502,
    "upstream_body_failed",
    `backend ${backend}'s answer broke off after ${received} bytes`,
    undefined,
    `${(cause as Error)?.message ?? String(cause)}`,
    { cause },
  );
}

/** A 413 `payload_too_large` error for a body over `limit` bytes. */
export function tooLarge(limit: number): GatewayError {
  return new GatewayError(
    413,
    "payload_too_large",
    `body exceeds max_body_size of ${limit} bytes`,
  );
}

/** Read a stream into one buffer, failing with 413 as soon as it passes `limit` bytes. */
export async function readLimited(
  stream: ReadableStream<Uint8Array>,
  limit: number,
  overLimit: (limit: number) => GatewayError = tooLarge,
  deadlineMs?: number,
): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  const total = await readChunks(
    stream,
    limit,
    (c) => {
      chunks.push(c);
    },
    overLimit,
    deadlineMs,
  );
  return concatChunks(chunks, total);
}

/** A pass-through stream that errors with 413 once more than `limit` bytes went through. */
export function limitStream(
  limit: number,
  onExceeded?: (err: unknown) => void,
  overLimit: (limit: number) => GatewayError = tooLarge,
): TransformStream<Uint8Array, Uint8Array> {
  let total = 0;
  return new TransformStream({
    transform(chunk, controller) {
      total += chunk.byteLength;
      if (total > limit) {
        const err = overLimit(limit);
        onExceeded?.(err);
        controller.error(err);
      } else controller.enqueue(chunk);
    },
  });
}

/**
 * Protocols an envelope can come from (`http` covers HTTP/1.1 and HTTP/2; `mllp` is an HL7 v2
 * message from an `hl7` endpoint).
 */
export type Protocol = "http" | "h3" | "dimse" | "mllp";

/** Fields to build a RequestEnvelope. */
export interface RequestInit {
  /** Request id (kept from a sane `x-request-id`, else a UUID). */
  id: string;
  /** The protocol the request arrived over. */
  protocol: Protocol;
  /** HTTP method, or the DIMSE operation. */
  method: string;
  /** Path relative to the endpoint's prefix. */
  path: string;
  /** The path as the client sent it; default `path`. */
  originalPath?: string;
  /** Request headers (multi-value preserved). */
  headers?: Headers;
  /** False when `headers` may not be changed (a server request's): copied on first write access. */
  headersWritable?: boolean;
  /** Query parameters (multi-value preserved). */
  query?: URLSearchParams;
  /** The query string as received (`?a=1` or ``): parsed only if someone reads `query`. */
  rawQuery?: string;
  /** String key-values used for routing. */
  metadata?: Record<string, string>;
  /** The body; default empty. */
  body?: Body;
  /** Name of the endpoint the request arrived on. */
  endpoint: string;
  /** The client's address. */
  remoteAddr?: string;
  /** The scheme the client used; default `http`. */
  scheme?: "http" | "https";
  /** The host the client addressed. */
  host?: string;
  /** Aborted when the client goes away; a function is called on first use (it may cost an op). */
  signal?: AbortSignal | (() => AbortSignal);
  /**
   * Instead of `signal`: the object (a server's `Request`) whose `signal` is read on first use,
   * which spares the caller a closure per request.
   */
  signalOf?: { readonly signal: AbortSignal };
  /**
   * The request's lease on its isolate's memory budget: the bodies it reads whole into memory
   * (its own, and its backends' answers) are counted on it (gateway/memory).
   */
  memory?: BodyLease;
}

/** A request on its way through a pipeline. */
export class RequestEnvelope {
  /** Unique id, echoed as `X-Request-Id`. */
  readonly id: string;
  /** The protocol the request arrived over. */
  readonly protocol: Protocol;
  /** HTTP method, or the DIMSE operation name (e.g. `C-FIND`). */
  method: string;
  /** Path relative to the endpoint's `path_prefix`, always starting with `/`. */
  path: string;
  /** The path as received, prefix included. */
  readonly originalPath: string;
  #headers: Headers;
  #headersWritable: boolean;
  #query: URLSearchParams | undefined;
  #rawQuery: string;
  #querySnapshot: string | undefined;
  /** Routing key-values (string to string); `metadata_transform` rewrites them. */
  metadata: Record<string, string>;
  #body!: Body;
  /** The request's lease on its isolate's memory budget, when it has one. */
  readonly memory: BodyLease | undefined;
  /** Name of the endpoint that received the request. */
  readonly endpoint: string;
  /** Name of the pipeline, set by the router. */
  pipeline = "";
  /** The client's address, when known. */
  readonly remoteAddr?: string;
  /** The scheme the client used. */
  readonly scheme: "http" | "https";
  /** The host the client addressed. */
  readonly host: string;
  #signal: AbortSignal | (() => AbortSignal) | undefined;
  #signalOf: { readonly signal: AbortSignal } | undefined;

  /** A request from its parts. */
  constructor(init: RequestInit) {
    this.id = init.id;
    this.protocol = init.protocol;
    this.method = init.method;
    this.path = init.path;
    this.originalPath = init.originalPath ?? init.path;
    this.#headers = init.headers ?? new Headers();
    this.#headersWritable = init.headers ? init.headersWritable ?? true : true;
    this.#query = init.query;
    this.#rawQuery = init.query ? "" : init.rawQuery ?? "";
    this.metadata = init.metadata ?? {};
    this.memory = init.memory;
    this.body = init.body ?? Body.empty();
    this.endpoint = init.endpoint;
    this.remoteAddr = init.remoteAddr;
    this.scheme = init.scheme ?? "http";
    this.host = init.host ?? "";
    this.#signal = init.signal;
    this.#signalOf = init.signalOf;
  }

  /** The body, read and parsed only on demand. */
  get body(): Body {
    return this.#body;
  }

  /** A body given to the request is counted on its memory lease (a small body read ahead). */
  set body(value: Body) {
    if (this.memory) value.chargeTo(this.memory);
    this.#body = value;
  }

  /** Query parameters (repeated keys kept), parsed on first access; changes are forwarded. */
  get query(): URLSearchParams {
    if (!this.#query) {
      this.#query = new URLSearchParams(this.#rawQuery);
      this.#querySnapshot = this.#query.toString();
    }
    return this.#query;
  }

  set query(value: URLSearchParams) {
    this.#query = value;
  }

  /**
   * The query string to forward (`?…` or empty): the client's own bytes while nobody parsed the
   * query, so an upstream sees exactly what was sent (no re-encoding of `:` or `,`).
   */
  queryString(): string {
    if (!this.#query) return this.#rawQuery;
    const qs = this.#query.toString();
    // Read but not changed: still the client's bytes.
    if (qs === this.#querySnapshot) return this.#rawQuery;
    return qs ? "?" + qs : "";
  }

  /** The request headers, writable (a read-only original is copied on first access). */
  get headers(): Headers {
    if (!this.#headersWritable) {
      this.#headers = new Headers(this.#headers);
      this.#headersWritable = true;
    }
    return this.#headers;
  }

  set headers(value: Headers) {
    this.#headers = value;
    this.#headersWritable = true;
  }

  /** The request headers for reading only: no copy is made. */
  get readHeaders(): Headers {
    return this.#headers;
  }

  /** Aborted when the client goes away (looked up on first use). */
  get signal(): AbortSignal {
    if (this.#signalOf !== undefined) {
      this.#signal ??= this.#signalOf.signal;
      this.#signalOf = undefined;
    }
    if (typeof this.#signal === "function") this.#signal = this.#signal();
    if (!this.#signal) this.#signal = new AbortController().signal;
    return this.#signal;
  }
}

/** A response on its way back through a pipeline. */
export class ResponseEnvelope {
  /** HTTP status code. */
  status: number;
  /** The body, read and parsed only on demand. */
  body: Body;
  /** Name of the backend that produced it, when one did. */
  backend?: string;
  #headers: Headers | undefined;
  // Raw `[name, value, …]` fields from a backend, turned into Headers only when someone asks:
  // a proxied response nobody inspects skips that copy and its validation.
  #fields: string[] | undefined;

  /** A response from its status, headers, body and the backend that gave it. */
  constructor(status: number, headers?: Headers, body?: Body, backend?: string) {
    this.status = status;
    this.#headers = headers;
    this.body = body ?? Body.empty();
    this.backend = backend;
  }

  /** A response whose header fields are `[name, value, name, value, …]`, already validated. */
  /** A response from raw header lines (`name`, `value`, ... pairs), as upstream sent them. */
  static fromFields(
    status: number,
    fields: string[],
    body: Body,
    backend?: string,
  ): ResponseEnvelope {
    const res = new ResponseEnvelope(status, undefined, body, backend);
    res.#fields = fields;
    return res;
  }

  /** The response headers, writable. */
  get headers(): Headers {
    if (this.#headers === undefined) {
      const headers = new Headers();
      const fields = this.#fields;
      if (fields !== undefined) {
        for (let i = 0; i < fields.length; i += 2) headers.append(fields[i], fields[i + 1]);
        this.#fields = undefined;
      }
      this.#headers = headers;
    }
    return this.#headers;
  }

  set headers(value: Headers) {
    this.#headers = value;
    this.#fields = undefined;
  }

  /**
   * The fields as received, `[name, value, …]`, while nobody made Headers of them; else
   * undefined (read {@link headers} or {@link forEachHeader} then). Not to be changed.
   */
  get receivedFields(): readonly string[] | undefined {
    return this.#fields;
  }

  /**
   * Calls `callback(value, name)` for every field, without building Headers when nobody did.
   * Names are lower-case once Headers exist, as received before.
   */
  forEachHeader(callback: (value: string, name: string) => void): void {
    const fields = this.#fields;
    if (fields !== undefined) {
      for (let i = 0; i < fields.length; i += 2) callback(fields[i + 1], fields[i]);
    } else if (this.#headers !== undefined) {
      this.#headers.forEach(callback);
    }
  }

  /** A JSON response. */
  static json(status: number, value: unknown, contentType = "application/json"): ResponseEnvelope {
    const bytes = ENCODER.encode(JSON.stringify(value));
    return ResponseEnvelope.fromFields(
      status,
      ["content-type", contentType],
      new Body(bytes, contentType),
    );
  }
}

/** Headers as a plain object; repeated headers joined with `, ` (Set-Cookie kept as an array). */
export function headersToObject(headers: Headers): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  let cookies = false;
  // forEach: no iterator result object per field.
  headers.forEach((v, k) => {
    if (k === "set-cookie") cookies = true;
    else out[k] = v;
  });
  if (cookies) out["set-cookie"] = headers.getSetCookie();
  return out;
}

/** Query parameters as a plain object; a repeated key becomes an array of its values. */
export function queryToObject(query: URLSearchParams): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const key of new Set(query.keys())) {
    const values = query.getAll(key);
    out[key] = values.length === 1 ? values[0] : values;
  }
  return out;
}
