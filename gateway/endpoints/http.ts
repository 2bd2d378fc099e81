/**
 * The `http` endpoint: any HTTP request under `path_prefix` becomes a RequestEnvelope, and the
 * pipeline's ResponseEnvelope becomes the HTTP response. Headers (multi-value), query and body are
 * preserved; the body streams unless a middleware reads it.
 */
import { loggedPath, type PathShape } from "./logged_path.ts";
import type { ContentLimits, EndpointConfig } from "../../shared/gateway_config/mod.ts";
import { concatChunks, resetAwareBody } from "../body_read.ts";
import {
  Body,
  RequestEnvelope,
  type RequestInit as EnvelopeInit,
  type ResponseEnvelope,
} from "../envelope.ts";
import {
  clientBodyBroke,
  clientClosed,
  errorBody,
  GatewayError,
  toGatewayError,
} from "../errors.ts";
import {
  abortAfter,
  type BuiltPipeline,
  type ExecutorDeps,
  normalizePrefix,
  relativePath,
  runPipeline,
} from "../pipeline/mod.ts";
import type { HttpEndpoint, HttpExchange } from "./types.ts";
import { answerFailure, watchedAnswer } from "./answer_stream.ts";
import { addHl7Metadata, mayBeHl7 } from "./http_hl7.ts";

const NO_BODY_STATUS = new Set([101, 204, 205, 304]);
/** Bodies up to this declared size are read whole before the pipeline runs. */
const PREFETCH_BYTES = 64 * 1024;

/**
 * The init of the envelopes the endpoints make, one object reused: the constructor copies its
 * fields at once, and a 16-field literal per request was about 150 bytes of garbage. Every field
 * is set before each use; the references are cleared after it.
 */
const ENVELOPE_INIT: EnvelopeInit = {
  id: "",
  protocol: "http",
  method: "",
  path: "",
  originalPath: "",
  headers: undefined,
  headersWritable: false,
  rawQuery: "",
  metadata: undefined,
  body: undefined,
  endpoint: "",
  remoteAddr: undefined,
  scheme: "http",
  host: "",
  signalOf: undefined,
  memory: undefined,
};

/** The generic HTTP endpoint; `fhir` and `dicomweb` specialize it. */
export class HttpEndpointService implements HttpEndpoint {
  readonly config: EndpointConfig;
  readonly prefix: string;
  readonly pipeline: BuiltPipeline;
  readonly methods: string[] = ["*"];
  protected readonly limits: ContentLimits;

  constructor(config: EndpointConfig, pipeline: BuiltPipeline, limits: ContentLimits) {
    this.config = config;
    this.prefix = normalizePrefix(String(config.options.path_prefix ?? "/"));
    this.pipeline = pipeline;
    this.limits = limits;
  }

  /** How the path below the prefix is shaped, for {@link loggedPath}. */
  protected readonly pathShape: PathShape = "opaque";

  /** The request path for the info log, identifiers replaced. */
  loggedPath(pathname: string): string {
    return loggedPath(pathname, this.prefix, this.pathShape);
  }

  /**
   * Serve one request through the pipeline. A request with nothing to wait for before the
   * pipeline (no small body to read, no HL7 message, no asynchronous check) goes straight to it,
   * without an async frame of ours.
   */
  handle(ex: HttpExchange, deps: ExecutorDeps): Promise<Response> {
    let env: RequestEnvelope;
    let answer: Promise<ResponseEnvelope>;
    try {
      env = this.toEnvelope(ex);
      const length = env.body.knownLength;
      // Checked here so that a request without a small body costs no extra promise.
      const small = length !== null && length > 0 && length <= PREFETCH_BYTES;
      // The HTTP bridge: an HL7 v2 message names its header facts (hl7.*) for routing.
      if (small || mayBeHl7(env)) return this.#handlePrepared(env, small, ex, deps);
      const checked = this.checkRequest(env);
      if (checked) return this.#handleChecked(env, checked, ex, deps);
      answer = runPipeline(this.pipeline, env, deps);
    } catch (err) {
      try {
        return Promise.resolve(this.failed(err, ex));
      } catch (failure) {
        return Promise.reject(failure);
      }
    }
    const method = env.method;
    return answer.then(
      (res) => this.#answered(res, ex, method),
      (err) => this.failed(err, ex),
    );
  }

  /** {@link handle} for a request with a small body to read or an HL7 message to look into. */
  async #handlePrepared(
    env: RequestEnvelope,
    small: boolean,
    ex: HttpExchange,
    deps: ExecutorDeps,
  ): Promise<Response> {
    try {
      if (small) await this.prefetchSmallBody(env, ex.request);
      if (mayBeHl7(env)) await addHl7Metadata(env);
      const checked = this.checkRequest(env);
      if (checked) await checked;
      return this.#answered(await runPipeline(this.pipeline, env, deps), ex, env.method);
    } catch (err) {
      return this.failed(err, ex);
    }
  }

  /** {@link handle} once an asynchronous request check has passed. */
  async #handleChecked(
    env: RequestEnvelope,
    checked: Promise<void>,
    ex: HttpExchange,
    deps: ExecutorDeps,
  ): Promise<Response> {
    try {
      await checked;
      return this.#answered(await runPipeline(this.pipeline, env, deps), ex, env.method);
    } catch (err) {
      return this.failed(err, ex);
    }
  }

  /** The HTTP answer of the pipeline's response (the error answer when making it fails). */
  #answered(res: ResponseEnvelope, ex: HttpExchange, method: string): Response {
    try {
      ex.backend = res.backend;
      return this.toResponse(res, ex, method);
    } catch (err) {
      return this.failed(err, ex);
    }
  }

  /** The error answer of a failed request: counted, logged when it is ours (5xx), body dropped. */
  protected failed(err: unknown, ex: HttpExchange): Response {
    let g = toGatewayError(err);
    // A failure of ours while the client is gone is its consequence (a body that broke off,
    // wrapped where its cause was lost): logged and audited as the client's leaving.
    if (g.code === "internal_error" && ex.request.signal.aborted) g = clientClosed(err);
    ex.record.failed(g);
    // An unread request body must not keep the connection busy.
    ex.request.body?.cancel().catch(() => {});
    // A body given up on (it trickled past body_timeout_secs): HTTP/1.1 would read the rest of it
    // before the connection could close (the runtime answers `Connection: close` itself), so the
    // connection goes once this answer is out.
    if (g.status === 408) ex.client?.closeAfterAnswer(ex.request);
    return withErrorHeaders(this.errorResponse(g, ex.requestId), g);
  }

  /** Convert the HTTP request to an envelope (413 at once when Content-Length is over the limit). */
  protected toEnvelope(ex: HttpExchange): RequestEnvelope {
    const { request, url } = ex;
    const lengthHeader = request.headers.get("content-length");
    const declared = lengthHeader === null ? null : Number(lengthHeader);
    if (declared !== null && declared > this.limits.max_body_size) {
      throw new GatewayError(
        413,
        "payload_too_large",
        `body of ${declared} bytes exceeds max_body_size of ${this.limits.max_body_size} bytes`,
      );
    }
    let stream: ReadableStream<Uint8Array> | null = request.body;
    // A body that streams (not read whole below):
    if (stream && (declared === null || declared > PREFETCH_BYTES)) {
      // over HTTP/2 (no Host field: the runtime keeps `:authority` in the URL), a stream the client
      // resets ends like a whole body; its declared length, or else the request's signal read now,
      // tells them apart (body_read.ts);
      if (!request.headers.has("host")) {
        stream = resetAwareBody(stream, declared, declared === null ? request.signal : undefined);
      }
      // it keeps the connection active as it moves.
      if (ex.client) stream = ex.client.track(stream);
    }
    const body = stream
      ? new Body(stream, request.headers.get("content-type"), this.limits, declared)
      // The endpoint's limits also bound what the backend answers (executor.ts).
      : Body.empty(this.limits);
    const path = relativePath(url.pathname, this.prefix);
    const init = ENVELOPE_INIT;
    init.id = ex.requestId;
    init.protocol = ex.protocol;
    init.method = request.method;
    init.path = path;
    init.originalPath = url.pathname;
    init.headers = request.headers;
    init.rawQuery = url.search;
    init.metadata = {
      endpoint: this.config.name,
      service: this.config.service,
      method: init.method,
      path,
    };
    init.body = body;
    init.endpoint = this.config.name;
    init.remoteAddr = ex.remoteAddr;
    init.scheme = ex.scheme;
    init.host = request.headers.get("host") ?? url.host;
    // The request itself, read on first use: no closure per request.
    init.signalOf = request;
    init.memory = ex.memory;
    try {
      // The record reads the identity and what was asked from it at the end (the audit trail).
      return ex.record.envelope = new RequestEnvelope(init);
    } finally {
      // The shared init must not keep this request alive.
      init.headers =
        init.metadata =
        init.body =
        init.signalOf =
        init.memory =
          undefined;
    }
  }

  /**
   * A small body with a declared length is read at once with the runtime's native
   * `arrayBuffer()`: far cheaper than pulling it through a stream reader, and it lets the
   * backend send head and body in one write. Large or chunked bodies keep streaming. An HTTP/2
   * body (no Host field: the runtime keeps `:authority` in the URL) is read with a reader instead,
   * which the deadline cancels: `arrayBuffer()` is one runtime call that nothing stops, and the
   * stream would stay open (not reset) after the 408 for as long as the client trickles.
   */
  protected async prefetchSmallBody(env: RequestEnvelope, request: Request): Promise<void> {
    const length = env.body.knownLength;
    if (length === null || length === 0 || length > PREFETCH_BYTES || env.body.dataChanged) return;
    let bytes: Uint8Array;
    // A client trickling its body gets body_timeout_secs (one coarse shared timer, no per-request
    // setTimeout on this hot path).
    const seconds = this.limits.body_timeout_secs ?? 60;
    const deadline = new AbortController();
    const cancel = abortAfter(deadline, seconds * 1000);
    try {
      bytes = await Promise.race([
        request.headers.has("host")
          ? request.arrayBuffer().then((b) => new Uint8Array(b))
          : readUntil(request.body!, deadline.signal),
        new Promise<never>((_, reject) =>
          deadline.signal.addEventListener("abort", () =>
            reject(
              new GatewayError(
                408,
                "request_body_timeout",
                `the request body did not arrive within body_timeout_secs (${seconds} s)`,
              ),
            ))
        ),
      ]);
    } catch (err) {
      if (err instanceof GatewayError) throw err;
      // The body's connection is gone: the client left mid-upload.
      if (err instanceof Deno.errors.BadResource) throw clientClosed(err);
      throw clientBodyBroke(err) ?? new GatewayError(
        400,
        "request_body_failed",
        `the request body could not be read: ${(err as Error).message}`,
      );
    } finally {
      cancel();
    }
    // Fewer bytes than declared: an HTTP/2 stream the client reset (it ends like a whole body).
    if (bytes.byteLength < length) throw clientClosed();
    env.body = new Body(bytes, env.body.contentType, this.limits);
  }

  /** Service-specific request checks (the fhir endpoint checks content types). */
  protected checkRequest(_env: RequestEnvelope): void | Promise<void> {}

  /** Convert the response envelope to an HTTP response. */
  protected toResponse(res: ResponseEnvelope, ex: HttpExchange, method: string): Response {
    // Backends already removed upstream hop-by-hop fields; the envelope's fields are ours. They
    // are appended to the Response's own headers: a HeadersInit (pairs or a Headers object)
    // costs Deno a converted copy of every pair. The envelope's list as received when nobody
    // made Headers of it (most proxied answers), else one made here.
    const contentType = res.body.contentType;
    const fields = res.receivedFields ?? fieldList(res);
    let declared: string | null = null;
    for (let i = 0; i < fields.length; i += 2) {
      const name = fields[i];
      if (name.length === 14 && name.toLowerCase() === "content-length") declared = fields[i + 1];
    }
    // The Content-Length to send, if any.
    let length: string | null = null;
    let body: ReturnType<typeof res.body.forwardable> = null;
    if (NO_BODY_STATUS.has(res.status) || method === "HEAD") {
      const rest = res.body.forwardable();
      if (rest instanceof ReadableStream) rest.cancel().catch(() => {});
      // A HEAD answer describes the body a GET would get.
      if (method === "HEAD" && declared !== null) length = declared;
    } else {
      body = res.body.forwardable();
      // An untouched upstream stream keeps its declared length (Deno then sends it as is,
      // not chunked); bytes get their length from Deno; a changed body never keeps the old one.
      if (
        body instanceof ReadableStream && declared !== null &&
        res.body.knownLength === Number(declared)
      ) {
        length = declared;
      }
      if (body instanceof ReadableStream) {
        // A backend's streamed answer that breaks off is recorded as what it is; a streamed
        // answer keeps the client's connection active while it moves (idle timeout). One stream
        // around the answer does both: each one more is a copy per chunk on the hot path.
        const failed = res.backend !== undefined
          ? answerFailure(ex.record.lateFailure(), res.backend)
          : undefined;
        if (ex.client) body = ex.client.track(body, failed);
        else if (failed) body = watchedAnswer(body, ex.record.lateFailure(), res.backend!);
      }
    }
    const response = new Response(body as BodyInit | null, { status: res.status });
    const headers = response.headers;
    for (let i = 0; i < fields.length; i += 2) {
      const name = fields[i];
      switch (name.length === 14 || name.length === 12 ? name.toLowerCase() : "") {
        case "content-length":
        case "x-request-id":
          continue;
        case "content-type":
          if (contentType) continue;
      }
      headers.append(name, fields[i + 1]);
    }
    headers.append("x-request-id", ex.requestId);
    if (contentType) headers.append("content-type", contentType);
    if (length !== null) headers.append("content-length", length);
    return response;
  }

  /** The error format of this endpoint: JSON `{"error":{code,message,request_id}}`. */
  errorResponse(err: GatewayError, requestId: string): Response {
    return new Response(errorBody(err, requestId), {
      status: err.status,
      headers: { "content-type": "application/json", "x-request-id": requestId },
    });
  }
}

/** The whole of `body`, or what came of it when `signal` aborts (the reader is cancelled). */
async function readUntil(
  body: ReadableStream<Uint8Array>,
  signal: AbortSignal,
): Promise<Uint8Array> {
  const reader = body.getReader();
  signal.addEventListener("abort", () => reader.cancel().catch(() => {}), { once: true });
  const chunks: Uint8Array[] = [];
  let total = 0;
  while (true) {
    const { done, value } = await reader.read();
    if (done) return concatChunks(chunks, total);
    chunks.push(value);
    total += value.byteLength;
  }
}

/** The fields of `res` as one list, `[name, value, …]`. */
function fieldList(res: ResponseEnvelope): string[] {
  const fields: string[] = [];
  res.forEachHeader((value, name) => fields.push(name, value));
  return fields;
}

/** `res` with the headers `err` asks for (a challenge, a retry delay). */
export function withErrorHeaders(res: Response, err: GatewayError): Response {
  if (err.headers) { for (const [k, v] of Object.entries(err.headers)) res.headers.set(k, v); }
  return res;
}

/** Build an `http` endpoint. */
export function createHttpEndpoint(
  config: EndpointConfig,
  pipeline: BuiltPipeline,
  limits: ContentLimits,
): HttpEndpoint {
  return new HttpEndpointService(config, pipeline, limits);
}
