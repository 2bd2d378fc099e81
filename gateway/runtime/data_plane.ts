/**
 * The data plane of one isolate: the runtime serving traffic, the HTTP listeners and the dispatch
 * of each request to its endpoint. The gateway's main thread has one; each data-plane worker
 * (gateway/workers) has its own, built from the same configuration.
 */
import type { Logger } from "../../shared/mod.ts";
import { type ClientConnection, clientOf } from "../../shared/net/mod.ts";
import {
  type HttpEndpoint,
  type HttpExchange,
  type RequestTarget,
  requestTarget,
  withErrorHeaders,
} from "../endpoints/mod.ts";
import type { Protocol } from "../envelope.ts";
import { errorBody, GatewayError, toGatewayError, wasRecorded } from "../errors.ts";
import { BodyLease, heapFigures, isolateBudget, type MemoryBudget } from "../memory/mod.ts";
import type { Metrics } from "../observability/mod.ts";
import { type AuditSink, LogFieldSource, requestIdOf, RequestRecord } from "../pipeline/mod.ts";
import type { Runtime } from "./build.ts";
import { HttpListeners } from "./http_listeners.ts";

/** What a data plane reports to. */
export interface DataPlaneDeps {
  logger: Logger;
  metrics: Metrics;
  /** Where audit records go (absent or disabled: none are made). */
  audit?: AuditSink;
  /** The grace period of a listener that closes. */
  drainMs: () => number;
  /** False in the workers: QUIC listeners run in the main thread only (one UDP socket). */
  http3?: boolean;
  /**
   * The listeners' shared memory (per-address connection counts), by name: a worker is handed
   * the main thread's; the main thread's is made as its listeners need it.
   */
  listenerMemory?: Map<string, SharedArrayBuffer>;
  /** This isolate's budget of bodies held in memory (default: the isolate's own). */
  memory?: MemoryBudget;
}

/** The runtime serving traffic and the listeners that hand it requests. */
export class DataPlane {
  #current!: Runtime;
  /** The isolate's memory budget, sized by the serving configuration. */
  readonly #budget: MemoryBudget;
  /** The HTTP (and, in the main thread, HTTP/3) listeners. */
  readonly listeners: HttpListeners;
  readonly #logger: Logger;
  readonly #metrics: Metrics;
  readonly #audit: AuditSink | undefined;
  /** Memory the listeners share with the workers' listeners of the same ports, by name. */
  readonly listenerMemory: Map<string, SharedArrayBuffer>;

  constructor(deps: DataPlaneDeps) {
    this.listenerMemory = deps.listenerMemory ?? new Map();
    this.#logger = deps.logger;
    this.#metrics = deps.metrics;
    this.#audit = deps.audit;
    const budget = this.#budget = deps.memory ?? isolateBudget;
    deps.metrics.memory.source(() => {
      const heap = heapFigures();
      return {
        heapUsed: heap.used,
        heapLimit: heap.limit,
        buffered: budget.used,
        budget: budget.limit,
      };
    });
    this.listeners = new HttpListeners({
      handle: (req, info, tls, network, protocol) => this.handle(req, info, tls, network, protocol),
      internalError: (err) => this.internalError(err),
      logger: deps.logger,
      drainMs: deps.drainMs,
      http3: deps.http3 ?? true,
      sharedMemory: (name, bytes) => {
        let buffer = this.listenerMemory.get(name);
        if (!buffer || buffer.byteLength !== bytes) {
          buffer = new SharedArrayBuffer(bytes);
          this.listenerMemory.set(name, buffer);
        }
        return buffer;
      },
    });
  }

  /** The configuration generation serving new requests. */
  get current(): Runtime {
    return this.#current;
  }

  /** Serves `runtime` from now on; its `[runtime] max_buffered_bytes` sizes the memory budget. */
  set current(runtime: Runtime) {
    this.#current = runtime;
    this.#budget.configure(runtime.config.runtime?.max_buffered_bytes);
  }

  /** Serves one request on the current runtime. */
  async handle(
    request: Request,
    info: Deno.ServeHandlerInfo<Deno.NetAddr>,
    tls: boolean,
    network: string,
    protocol: Protocol = "http",
  ): Promise<Response> {
    const rt = this.#current;
    rt.acquire();
    // What the request reads whole into memory is counted here, and given back at its end.
    const memory = new BodyLease(this.#budget);
    const requestId = requestIdOf(request.headers.get("x-request-id"));
    const url = requestTarget(request.url);
    try {
      const route = rt.routes.match(network, url.pathname);
      if (!route) {
        this.#metrics.errorCode("no_route");
        request.body?.cancel().catch(() => {});
        const err = new GatewayError(404, "no_route", `no endpoint serves ${url.pathname}`);
        return new Response(errorBody(err, requestId), {
          status: 404,
          headers: { "content-type": "application/json", "x-request-id": requestId },
        });
      }
      const endpoint = route.endpoint;
      const pipeline = endpoint.pipeline.name;
      const record = new RequestRecord(rt.deps, pipeline, requestId);
      if (this.#audit?.enabled) {
        record.origin = {
          endpoint: endpoint.config.name,
          protocol,
          method: request.method,
          path: url.pathname,
          query: url.search,
          remoteAddr: info.remoteAddr.hostname,
        };
      }
      const ex = new ServedExchange(
        request,
        url,
        requestId,
        record,
        protocol,
        tls,
        info,
        memory,
        endpoint,
        rt.config.logging.log_identifiers,
      );
      const response = await endpoint.handle(ex, rt.deps);
      ex.status = response.status;
      // The exchange makes the log line's fields when it is written (RequestRecord.finished).
      const committed = record.finished(response.status, "request", ex);
      // The answer goes out once its audit record is durable (`durability = "sync"`).
      return committed
        ? await this.#whenRecorded(committed, response, endpoint, requestId)
        : response;
    } finally {
      memory.release();
      rt.release();
    }
  }

  /**
   * `response` once `committed` (its audit record's write) has ended; the endpoint's error answer
   * (503 `audit_unavailable`) in its place when the record was not kept.
   */
  async #whenRecorded(
    committed: Promise<void>,
    response: Response,
    endpoint: HttpEndpoint,
    requestId: string,
  ): Promise<Response> {
    try {
      await committed;
      return response;
    } catch (err) {
      response.body?.cancel().catch(() => {});
      const g = toGatewayError(err);
      return withErrorHeaders(endpoint.errorResponse(g, requestId), g);
    }
  }

  /** The 500 of an error that escaped the dispatch (logged with its stack). */
  internalError(err: unknown): Response {
    // A streamed answer that broke off was logged and counted with its request (answer_stream).
    if (wasRecorded(err)) return new Response(null, { status: 502 });
    this.#logger.error("unhandled error in the HTTP listener", { error: err as Error });
    this.#metrics.errorCode("internal_error");
    const id = crypto.randomUUID();
    return new Response(
      errorBody(new GatewayError(500, "internal_error", "internal error"), id),
      { status: 500, headers: { "content-type": "application/json", "x-request-id": id } },
    );
  }
}

/**
 * One request as the data plane hands it to its endpoint, and the maker of its access log
 * line's fields (called only when the line is written): one object per request instead of a
 * literal and a closure.
 */
class ServedExchange extends LogFieldSource implements HttpExchange {
  readonly request: Request;
  readonly url: RequestTarget;
  readonly requestId: string;
  readonly record: RequestRecord;
  readonly protocol: Protocol;
  readonly scheme: "http" | "https";
  readonly remoteAddr: string;
  readonly client: ClientConnection | undefined;
  backend: string | undefined = undefined;
  readonly memory: BodyLease;
  readonly #endpoint: HttpEndpoint;
  readonly #logIdentifiers: boolean;
  /** The answer's status, once the endpoint answered. */
  status = 0;

  constructor(
    request: Request,
    url: RequestTarget,
    requestId: string,
    record: RequestRecord,
    protocol: Protocol,
    tls: boolean,
    info: Deno.ServeHandlerInfo<Deno.NetAddr>,
    memory: BodyLease,
    endpoint: HttpEndpoint,
    logIdentifiers: boolean | undefined,
  ) {
    super();
    this.request = request;
    this.url = url;
    this.requestId = requestId;
    this.record = record;
    this.protocol = protocol;
    this.scheme = tls ? "https" : "http";
    this.remoteAddr = info.remoteAddr.hostname;
    this.client = clientOf(info);
    this.memory = memory;
    this.#endpoint = endpoint;
    this.#logIdentifiers = logIdentifiers === true;
  }

  logFields(): Record<string, unknown> {
    const pathname = this.url.pathname;
    return {
      method: this.request.method,
      // Patient identifiers (a FHIR id, a study UID) stay out of the log unless asked for.
      path: this.#logIdentifiers ? pathname : this.#endpoint.loggedPath(pathname),
      pipeline: this.record.pipeline,
      backend: this.backend,
      status: this.status,
      error_code: this.record.errorCode,
    };
  }
}
