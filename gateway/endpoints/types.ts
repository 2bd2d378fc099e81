/** Contract between the HTTP-family adapters (HTTP/1.1, HTTP/2, HTTP/3) and endpoint services. */
import type { EndpointConfig } from "../../shared/gateway_config/mod.ts";
import type { ClientConnection } from "../../shared/net/mod.ts";
import type { Protocol } from "../envelope.ts";
import type { GatewayError } from "../errors.ts";
import type { BodyLease } from "../memory/mod.ts";
import type { BuiltPipeline, ExecutorDeps, RequestRecord } from "../pipeline/mod.ts";

/** One HTTP request as an adapter hands it to an endpoint. */
export interface HttpExchange {
  request: Request;
  url: RequestTarget;
  requestId: string;
  /** The request's front-door record: failures and the access log line (pipeline/front_door.ts). */
  record: RequestRecord;
  protocol: Protocol;
  scheme: "http" | "https";
  remoteAddr?: string;
  /**
   * The client's connection when a guarded listener serves it (shared/net/guarded_listener.ts):
   * the bodies the endpoint streams are tracked on it, so that they count as activity against
   * the idle timeout.
   */
  client?: ClientConnection;
  /** Set by the endpoint: the backend that produced the response (for the access log). */
  backend?: string;
  /**
   * The request's lease on its isolate's memory budget (gateway/memory): what the request reads
   * whole into memory is counted on it, and the data plane gives it back when the request ends.
   */
  memory?: BodyLease;
}

/** An HTTP-family endpoint bound to its pipeline. */
export interface HttpEndpoint {
  readonly config: EndpointConfig;
  /** Normalized `path_prefix`. */
  readonly prefix: string;
  readonly pipeline: BuiltPipeline;
  /** HTTP methods served, for the route listing (`*` = any). */
  readonly methods: string[];
  /** Serve one request; never throws (errors become the endpoint's error format). */
  handle(ex: HttpExchange, deps: ExecutorDeps): Promise<Response>;
  /** The request path as the info log writes it, identifiers replaced (logged_path.ts). */
  loggedPath(pathname: string): string;
  /** This endpoint's answer to `err` (JSON error, or a FHIR OperationOutcome). */
  errorResponse(err: GatewayError, requestId: string): Response;
}

/** The parts of a request URL the endpoints use. */
export interface RequestTarget {
  /** Host and port as in the URL (`example.org:8080`). */
  host: string;
  /** The path, starting with `/`, percent-encoded as received. */
  pathname: string;
  /** `?…` or the empty string. */
  search: string;
}

/**
 * Splits a server request's URL (always absolute and already normalized by the HTTP server)
 * without building a URL object, which costs a full WHATWG parse on every request.
 */
export function requestTarget(url: string): RequestTarget {
  const scheme = url.indexOf("://");
  const slash = scheme === -1 ? -1 : url.indexOf("/", scheme + 3);
  if (slash === -1) {
    const parsed = new URL(url);
    return { host: parsed.host, pathname: parsed.pathname, search: parsed.search };
  }
  const query = url.indexOf("?", slash);
  const hash = url.indexOf("#", slash);
  const pathEnd = query !== -1 ? query : hash !== -1 ? hash : url.length;
  return {
    host: url.slice(scheme + 3, slash),
    pathname: url.slice(slash, pathEnd),
    // `?` alone is no query, as URL.search has it.
    search: query === -1 || query + 1 === (hash === -1 ? url.length : hash)
      ? ""
      : url.slice(query, hash === -1 ? url.length : hash),
  };
}
