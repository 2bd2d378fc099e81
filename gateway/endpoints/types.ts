/** Contract between the HTTP-family adapters (HTTP/1.1, HTTP/2, HTTP/3) and endpoint services. */
import type { EndpointConfig } from "../../shared/gateway_config/types.ts";
import type { Protocol } from "../envelope.ts";
import type { BuiltPipeline, ExecutorDeps } from "../pipeline/mod.ts";

/** One HTTP request as an adapter hands it to an endpoint. */
export interface HttpExchange {
  request: Request;
  url: URL;
  requestId: string;
  protocol: Protocol;
  scheme: "http" | "https";
  remoteAddr?: string;
  /** Set by the endpoint: the backend that produced the response (for the access log). */
  backend?: string;
  /** Set by the endpoint: the error code of an error response. */
  errorCode?: string;
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
}
