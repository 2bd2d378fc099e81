/**
 * The `jmix` endpoint: JMIX 1.0 packages under `path_prefix` (see docs/jmix.md).
 * - `GET {prefix}/api/jmix/{id}`: the package zip (`application/zip`);
 * - `GET {prefix}/api/jmix/{id}/manifest`: its `manifest.json`;
 * - `GET {prefix}/api/jmix?studyInstanceUid=`: the newest package of the study from the index;
 *   without one and with a `dicom_scu` backend in the pipeline, the study is retrieved, packaged,
 *   stored, indexed and returned;
 * - `POST {prefix}/api/jmix`: a package upload, validated, stored and indexed (201 `{id, status}`).
 * Packages and the index live in the pipeline's `storage` backend. The pipeline's middleware act
 * on every request and response; the endpoint itself is the one "backend" of that run.
 *
 * @example
 * ```ts
 * import { indexPath, packagePath } from "./mod.ts";
 *
 * // Where a package and a study's index are kept in the pipeline's storage backend.
 * console.log(packagePath("pkg-1")); // /jmix/packages/pkg-1.zip
 * console.log(indexPath("1.2.840.1")); // /jmix/index/1.2.840.1.json
 * ```
 *
 * @module
 */
import type { ContentLimits, EndpointConfig } from "../../../shared/gateway_config/mod.ts";
import { StorageBackend } from "../../backends/storage/mod.ts";
import type { RequestEnvelope, ResponseEnvelope } from "../../envelope.ts";
import { GatewayError, toGatewayError } from "../../errors.ts";
import {
  type Backend,
  type BackendCall,
  type BuiltPipeline,
  type ExecutorDeps,
  relativePath,
  runPipeline,
} from "../../pipeline/mod.ts";
import { HttpEndpointService, withErrorHeaders } from "../http.ts";
import type { HttpEndpoint, HttpExchange } from "../types.ts";
import { matchRoute, ROUTE_METHODS } from "./routes.ts";
import { type JmixBackends, JmixService } from "./service.ts";
import { JmixSettings } from "./settings.ts";

export { dicomPayload, metadataOf } from "./dicom_metadata.ts";
export { indexPath, packagePath } from "./repository.ts";
export { JMIX_DEFAULTS, JmixSettings } from "./settings.ts";

/** The backends of the pipeline the endpoint uses, or the reason it cannot serve. */
function backendsOf(pipeline: BuiltPipeline): JmixBackends | string {
  const storage = pipeline.backends.find((b) => b.config.service === "storage");
  if (!storage) return `pipeline ${pipeline.name} has no storage backend to keep packages in`;
  if (storage instanceof StorageBackend) {
    const { read, write } = storage.settings;
    if (!read || !write || read.source !== write.source || !read.names.includes("path")) {
      return `storage backend ${storage.name} of a jmix pipeline needs read_pattern and ` +
        `write_pattern equal and using {path} (e.g. both "{path}")`;
    }
  }
  const scu = pipeline.backends.find((b) => b.config.service === "dicom_scu");
  return { storage, scu };
}

/** The JMIX endpoint. */
export class JmixEndpointService extends HttpEndpointService {
  override readonly methods = ["GET", "HEAD", "POST"];
  readonly #settings: JmixSettings;
  readonly #service: JmixService | string;
  readonly #backend: Pick<Backend, "name" | "config" | "close"> | undefined;

  constructor(config: EndpointConfig, pipeline: BuiltPipeline, limits: ContentLimits) {
    const settings = new JmixSettings(config.options);
    super(config, pipeline, { ...limits, max_body_size: settings.maxPackageBytes });
    this.#settings = settings;
    const backends = backendsOf(pipeline);
    this.#service = typeof backends === "string"
      ? backends
      : new JmixService(settings, backends, config.name, this.prefix);
    if (typeof backends !== "string") {
      const timeout = backends.storage.config.timeout_secs +
        (backends.scu?.config.timeout_secs ?? 0);
      this.#backend = {
        name: backends.storage.name,
        config: { ...backends.storage.config, match: undefined, timeout_secs: timeout },
        close: () => {},
      };
    }
  }

  /** Route, then run the pipeline's middleware around the JMIX operation. */
  override async handle(ex: HttpExchange, deps: ExecutorDeps): Promise<Response> {
    try {
      const path = relativePath(ex.url.pathname, this.prefix);
      const route = matchRoute(path);
      if (!route) throw new GatewayError(404, "not_found", `no JMIX route for ${path}`);
      const methods = ROUTE_METHODS[route.name];
      if (!methods.includes(ex.request.method)) {
        const err = new GatewayError(405, "method_not_allowed", `accepts ${methods.join(", ")}`);
        return this.#fail(ex, err, { allow: methods.join(", ") });
      }
      const service = this.#service;
      if (typeof service === "string") throw new GatewayError(500, "jmix_misconfigured", service);
      const env = this.toEnvelope(ex);
      const backend: Backend = {
        ...this.#backend!,
        invoke: (req: RequestEnvelope, call: BackendCall): Promise<ResponseEnvelope> =>
          service.serve(route, req, call),
      };
      const res = await runPipeline({ ...this.pipeline, backends: [backend] }, env, deps);
      ex.backend = res.backend;
      return this.toResponse(res, ex, env.method);
    } catch (err) {
      return this.#fail(ex, toGatewayError(err));
    }
  }

  #fail(
    ex: HttpExchange,
    g: GatewayError,
    headers: Record<string, string> = {},
  ): Response {
    ex.record.failed(g);
    ex.request.body?.cancel().catch(() => {});
    const res = withErrorHeaders(this.errorResponse(g, ex.requestId), g);
    for (const [k, v] of Object.entries(headers)) res.headers.set(k, v);
    return res;
  }

  /** The settings of this endpoint (limits, keys). */
  get settings(): JmixSettings {
    return this.#settings;
  }
}

/** Build a `jmix` endpoint. */
export function createJmixEndpoint(
  config: EndpointConfig,
  pipeline: BuiltPipeline,
  limits: ContentLimits,
): HttpEndpoint {
  return new JmixEndpointService(config, pipeline, limits);
}
