/**
 * The `dicomweb` endpoint: the QIDO-RS routes of every level, the WADO-RS routes and STOW-RS
 * (`POST /studies`, `POST /studies/{study}`) under `path_prefix` (DICOMWEB_ROUTES). Which backend
 * serves them is the pipeline's primary:
 * - `dicomweb`: requests are forwarded as they are (a DICOMweb proxy);
 * - `dicom_scu`: requests are bridged (QIDO -> C-FIND, WADO -> C-GET or C-MOVE, STOW -> C-STORE;
 *   see the backend); a retrieval that finds nothing is 404 and a C-STORE outcome becomes a STOW-RS
 *   response (ReferencedSOPSequence / FailedSOPSequence). Frames and bulk data retrieve the
 *   instance and the backend cuts out what was asked for;
 * - anything else: 501 Not Implemented with a JSON error, SPEC's baseline.
 * Unknown paths are 404, other methods 405, a malformed frame list 400 (whatever the backend).
 */
import type { ContentLimits, EndpointConfig } from "../../shared/gateway_config/mod.ts";
import { type DicomJson, FrameListError, parseFrameList, parseStatus } from "../dicom/mod.ts";
import { type RequestEnvelope, ResponseEnvelope } from "../envelope.ts";
import { GatewayError } from "../errors.ts";
import {
  type BuiltPipeline,
  type ExecutorDeps,
  relativePath,
  runPipeline,
} from "../pipeline/mod.ts";
import { HttpEndpointService, withErrorHeaders } from "./http.ts";
import type { HttpEndpoint, HttpExchange } from "./types.ts";
import { type DicomwebRoute, findDicomwebRoute } from "./dicomweb_routes.ts";

export {
  DICOMWEB_ROUTES,
  type DicomwebRoute,
  type DicomwebRouteService,
  findDicomwebRoute,
} from "./dicomweb_routes.ts";

/** The DICOMweb endpoint. */
export class DicomwebEndpointService extends HttpEndpointService {
  protected override readonly pathShape = "dicomweb";
  override readonly methods = ["GET", "HEAD", "POST"];
  readonly #primary: string | undefined;

  constructor(config: EndpointConfig, pipeline: BuiltPipeline, limits: ContentLimits) {
    super(
      {
        ...config,
        options: { ...config.options, path_prefix: config.options.path_prefix ?? "/dicomweb" },
      },
      pipeline,
      limits,
    );
    this.#primary = pipeline.backends[0]?.config.service;
  }

  /** Route, check, then forward or bridge; 404, 405 and 501 as described above. */
  override async handle(ex: HttpExchange, deps: ExecutorDeps): Promise<Response> {
    const path = relativePath(ex.url.pathname, this.prefix);
    const checked = this.#route(ex.request.method, path);
    if (checked instanceof GatewayError) {
      ex.request.body?.cancel().catch(() => {});
      // Routing answers (404, 405, 501): counted, not logged as failures of ours.
      ex.record.failed(checked, {}, { logged: false });
      return withErrorHeaders(this.errorResponse(checked, ex.requestId), checked);
    }
    const route = checked;
    try {
      const env = this.toEnvelope(ex);
      const res = await this.#adapt(await runPipeline(this.pipeline, env, deps), env, route);
      ex.backend = res.backend;
      return this.toResponse(res, ex, env.method);
    } catch (e) {
      return this.failed(e, ex);
    }
  }

  /** The route of a request, or the error that answers it (a 405 with its `Allow` header). */
  #route(method: string, path: string): DicomwebRoute | GatewayError {
    const { route, allowed } = findDicomwebRoute(method, path);
    if (allowed.length === 0) {
      return new GatewayError(404, "not_found", `no DICOMweb route for ${path}`);
    }
    if (!route) {
      const allow = allowed.join(", ");
      const err = new GatewayError(405, "method_not_allowed", `${path} accepts ${allow}`);
      err.headers = { allow };
      return err;
    }
    if (this.#primary !== "dicomweb" && this.#primary !== "dicom_scu") {
      return new GatewayError(
        501,
        "not_implemented",
        `DICOMweb ${route.name} is not implemented by pipeline ${this.pipeline.name}`,
      );
    }
    return (route.name === "frames" ? frameListError(path) : undefined) ?? route;
  }

  /** Shape DIMSE outcomes (dicom_scu primary) as DICOMweb answers. */
  async #adapt(
    res: ResponseEnvelope,
    env: RequestEnvelope,
    route: DicomwebRoute,
  ): Promise<ResponseEnvelope> {
    if (this.#primary !== "dicom_scu" || res.status >= 400) return res;
    if (route.service === "wado" && res.headers.get("x-dicom-completed") === "0") {
      await res.body.bytes().catch(() => {});
      throw new GatewayError(404, "not_found", `no instance matches ${env.path}`);
    }
    if (route.service === "stow") return stowResponse(res, env);
    return res;
  }
}

/** 400 for a frame list that is not one (PS3.18 8.3.5.1), else undefined. */
function frameListError(path: string): GatewayError | undefined {
  try {
    parseFrameList(path.slice(path.lastIndexOf("/") + 1));
    return undefined;
  } catch (err) {
    if (!(err instanceof FrameListError)) throw err;
    return new GatewayError(400, "invalid_dicom_request", err.message);
  }
}

interface StoreOutcome {
  sop_class_uid: string;
  sop_instance_uid: string;
  study_instance_uid?: string;
  series_instance_uid?: string;
  status: string;
}

/**
 * A dicom_scu C-STORE outcome as a STOW-RS response (PS3.18 10.5.3): each stored instance with
 * the gateway URL it can be retrieved from, and the study's URL at the top when the instances
 * belong to one study.
 */
async function stowResponse(
  res: ResponseEnvelope,
  env: RequestEnvelope,
): Promise<ResponseEnvelope> {
  const data = await res.body.data() as { instances?: StoreOutcome[] };
  const ok: DicomJson[] = [];
  const failed: DicomJson[] = [];
  const base = `${env.scheme}://${env.host}${
    env.originalPath.slice(0, env.originalPath.length - env.path.length)
  }`;
  const studies = new Set<string>();
  for (const o of data.instances ?? []) {
    const item: DicomJson = {
      "00081150": { vr: "UI", Value: [o.sop_class_uid] },
      "00081155": { vr: "UI", Value: [o.sop_instance_uid] },
    };
    const status = parseStatus(o.status) ?? 0xc000;
    if (status === 0 || (status & 0xf000) === 0xb000) {
      if (o.study_instance_uid) {
        studies.add(o.study_instance_uid);
        if (o.series_instance_uid) {
          item["00081190"] = {
            vr: "UR",
            Value: [
              `${base}/studies/${o.study_instance_uid}/series/${o.series_instance_uid}/instances/${o.sop_instance_uid}`,
            ],
          };
        }
      }
      ok.push(item);
    } else failed.push({ ...item, "00081197": { vr: "US", Value: [status] } });
  }
  const body: DicomJson = {};
  // POST /studies/{study} names the study; otherwise the one study the instances share.
  const study = /^\/studies\/([0-9.]+)$/.exec(env.path)?.[1] ??
    (studies.size === 1 ? [...studies][0] : undefined);
  if (study) body["00081190"] = { vr: "UR", Value: [`${base}/studies/${study}`] };
  if (failed.length) body["00081198"] = { vr: "SQ", Value: failed };
  if (ok.length) body["00081199"] = { vr: "SQ", Value: ok };
  const out = ResponseEnvelope.json(
    failed.length === 0 ? 200 : ok.length === 0 ? 409 : 202,
    body,
    "application/dicom+json",
  );
  out.backend = res.backend;
  const status = res.headers.get("x-dicom-status");
  if (status) out.headers.set("x-dicom-status", status);
  return out;
}

/** Build a `dicomweb` endpoint. */
export function createDicomwebEndpoint(
  config: EndpointConfig,
  pipeline: BuiltPipeline,
  limits: ContentLimits,
): HttpEndpoint {
  return new DicomwebEndpointService(config, pipeline, limits);
}
