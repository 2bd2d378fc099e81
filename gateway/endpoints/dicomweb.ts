/**
 * The `dicomweb` endpoint: the QIDO-RS / WADO-RS routes of SPEC under `path_prefix`. Until a
 * DICOMweb-capable backend serves them (the DICOM work), every route answers SPEC's baseline:
 * 501 Not Implemented with a JSON error. Other paths are 404 and other methods 405.
 */
import type { ContentLimits, EndpointConfig } from "../../shared/gateway_config/types.ts";
import { errorBody, GatewayError } from "../errors.ts";
import type { BuiltPipeline, ExecutorDeps } from "../pipeline/mod.ts";
import { normalizePrefix, relativePath } from "../pipeline/mod.ts";
import type { HttpEndpoint, HttpExchange } from "./types.ts";

const UID = "[0-9.]+";
/** The routes of SPEC "dicomweb endpoint", relative to `path_prefix`. */
export const DICOMWEB_ROUTES: { name: string; pattern: RegExp }[] = [
  ["query studies", "/studies"],
  ["query series", `/studies/${UID}/series`],
  ["query instances", `/studies/${UID}/series/${UID}/instances`],
  ["study metadata", `/studies/${UID}/metadata`],
  ["series metadata", `/studies/${UID}/series/${UID}/metadata`],
  ["instance metadata", `/studies/${UID}/series/${UID}/instances/${UID}/metadata`],
  ["instance", `/studies/${UID}/series/${UID}/instances/${UID}`],
  ["frames", `/studies/${UID}/series/${UID}/instances/${UID}/frames/[0-9]+(,[0-9]+)*`],
  ["bulk data", "/bulkdata/.+"],
].map(([name, re]) => ({ name, pattern: new RegExp(`^${re}$`) }));

/** The DICOMweb endpoint (baseline: 501 on every known route). */
export class DicomwebEndpointService implements HttpEndpoint {
  readonly config: EndpointConfig;
  readonly prefix: string;
  readonly pipeline: BuiltPipeline;
  readonly methods = ["GET"];

  constructor(config: EndpointConfig, pipeline: BuiltPipeline, _limits: ContentLimits) {
    this.config = config;
    this.prefix = normalizePrefix(String(config.options.path_prefix ?? "/dicomweb"));
    this.pipeline = pipeline;
  }

  /** Answer 404, 405 or 501 per route. */
  handle(ex: HttpExchange, deps: ExecutorDeps): Promise<Response> {
    ex.request.body?.cancel().catch(() => {});
    const path = relativePath(ex.url.pathname, this.prefix);
    const route = DICOMWEB_ROUTES.find((r) => r.pattern.test(path));
    let err: GatewayError;
    const headers: Record<string, string> = {
      "content-type": "application/json",
      "x-request-id": ex.requestId,
    };
    if (!route) {
      err = new GatewayError(404, "not_found", `no DICOMweb route for ${path}`);
    } else if (ex.request.method !== "GET" && ex.request.method !== "HEAD") {
      err = new GatewayError(405, "method_not_allowed", `${route.name} accepts GET only`);
      headers.allow = "GET, HEAD";
    } else {
      err = new GatewayError(
        501,
        "not_implemented",
        `DICOMweb ${route.name} is not implemented by pipeline ${this.pipeline.name}`,
      );
    }
    ex.errorCode = err.code;
    deps.metrics.errorCode(err.code);
    return Promise.resolve(
      new Response(errorBody(err, ex.requestId), { status: err.status, headers }),
    );
  }
}

/** Build a `dicomweb` endpoint. */
export function createDicomwebEndpoint(
  config: EndpointConfig,
  pipeline: BuiltPipeline,
  limits: ContentLimits,
): HttpEndpoint {
  return new DicomwebEndpointService(config, pipeline, limits);
}
