/**
 * The `dicomweb` backend: an `http` backend (same targets, retries, timeouts) that also speaks
 * DICOMweb for envelopes carrying a DIMSE operation (from a dicom_scp endpoint, or an HTTP request
 * with `metadata.dicom_operation`):
 * - C-FIND -> QIDO-RS (`GET /studies|series|instances?...`), answered as a DICOM JSON array;
 * - C-GET / C-MOVE -> WADO-RS (`GET /studies/{s}[/series/{se}[/instances/{i}]]`, Accept
 *   `multipart/related; type="application/dicom"`), answered as the multipart of instances;
 * - C-STORE -> STOW-RS (`POST /studies`, multipart/related of the instance);
 * - C-ECHO -> a one-result QIDO-RS probe.
 * Those answers carry `x-dicom-status`; an upstream error status becomes a 502
 * `dicomweb_failure` error (404 on a query or retrieval means no match). Plain HTTP requests are
 * proxied as by `http`, except that a single `application/dicom` instance POSTed to `/studies` is
 * wrapped as the multipart/related body STOW-RS requires.
 *
 * @example
 * ```ts
 * import { createDicomwebBackend } from "./mod.ts";
 * import { validateConfigText } from "../../../shared/gateway_config/mod.ts";
 * import { silentLogger } from "../../../shared/mod.ts";
 *
 * // A backend is built from its validated configuration (the gateway does this on every load).
 * const { config } = validateConfigText(
 *   `[backends.pacs]
 * service = "dicomweb"
 * [backends.pacs.options]
 * base_url = "http://127.0.0.1:8042/dicom-web"
 * [endpoints.web]
 * service = "dicomweb"
 * [pipelines.p]
 * endpoints = ["web"]
 * backends = ["pacs"]
 * `,
 *   "gateway.toml",
 * );
 * const backend = await createDicomwebBackend(config!.backends.pacs, {
 *   config: config!,
 *   logger: silentLogger,
 *   baseDir: ".",
 *   validateOnly: true,
 * });
 * console.log(backend.name); // pacs
 * ```
 *
 * @module
 */
import type { BackendConfig } from "../../../shared/gateway_config/mod.ts";
import { type DicomJson, STATUS, statusHex } from "../../dicom/mod.ts";
import {
  Body,
  type RequestEnvelope,
  RequestEnvelope as Envelope,
  ResponseEnvelope,
} from "../../envelope.ts";
import { causedError, GatewayError } from "../../errors.ts";
import type { Backend, BackendCall, BuildContext } from "../../pipeline/mod.ts";
import { normalizeOperation } from "../dicom_scu/mod.ts";
import { HttpBackend } from "../http.ts";
import { loadUpstreamAccess, type UpstreamAccess } from "../credentials/mod.ts";
import { qidoRequest, stowBody, wadoPath } from "./format.ts";
import { gatewayBase, mayCarryRetrieveUrls, rewriteRetrieveUrls } from "./retrieve_url.ts";

const DICOM_MULTIPART = 'multipart/related; type="application/dicom"';

/** A DICOMweb origin server (Orthanc, dcm4chee, a cloud PACS). */
export class DicomwebBackend implements Backend {
  readonly name: string;
  readonly config: BackendConfig;
  readonly #http: HttpBackend;
  /** The base and target URLs (no trailing slash): the origin addresses retrieve URLs name. */
  readonly #origins: string[];

  constructor(config: BackendConfig, ctx: BuildContext, access: UpstreamAccess = {}) {
    this.name = config.name;
    this.config = config;
    this.#http = new HttpBackend(config, ctx, undefined, access);
    this.#origins = this.#http.pool.targets.map((t) => t.url.replace(/\/+$/, ""))
      .filter((u) => u !== "");
  }

  /** The target pool, for the management API's pipeline listing. */
  get pool(): unknown {
    return (this.#http as unknown as { pool: unknown }).pool;
  }

  /** Proxy, or format the DIMSE operation of the envelope as DICOMweb. */
  async invoke(req: RequestEnvelope, call: BackendCall): Promise<ResponseEnvelope> {
    const op = normalizeOperation(
      req.metadata.dicom_operation ?? (req.protocol === "dimse" ? req.method : undefined),
    );
    // Identity encoding upstream: fetch would decompress a gzip answer yet keep its
    // Content-Encoding header, and the client would then try to decompress it again.
    req.headers.set("accept-encoding", "identity");
    if (!op) return await this.#proxy(req, call);
    const res = await this.#operation(op, req, call);
    res.backend = this.name;
    return res;
  }

  /** A plain HTTP request, forwarded; the origin's retrieve URLs become the gateway's. */
  async #proxy(req: RequestEnvelope, call: BackendCall): Promise<ResponseEnvelope> {
    const res = await this.#http.invoke(await this.#wrapStow(req), call);
    if (this.#origins.length === 0 || !mayCarryRetrieveUrls(req, res)) return res;
    let data: unknown;
    try {
      data = await res.body.data();
    } catch {
      return res; // Not JSON after all: passed on as the origin sent it (the bytes are kept).
    }
    if (rewriteRetrieveUrls(data, this.#origins, gatewayBase(req)) > 0) {
      res.body.setData(data, res.body.contentType ?? "application/dicom+json");
      res.headers.delete("content-length");
    }
    return res;
  }

  async #wrapStow(req: RequestEnvelope): Promise<RequestEnvelope> {
    const type = (req.body.contentType ?? "").split(";")[0].trim().toLowerCase();
    if (req.method !== "POST" || type !== "application/dicom") return req;
    const stow = stowBody([await req.body.bytes()]);
    req.body = new Body(stow.body, stow.contentType);
    req.headers.set("content-type", stow.contentType);
    req.headers.delete("content-length");
    return req;
  }

  async #operation(op: string, req: RequestEnvelope, call: BackendCall): Promise<ResponseEnvelope> {
    const identifier = async () => (req.body.isEmpty ? {} : await req.body.data()) as DicomJson;
    let sub: Envelope;
    try {
      switch (op) {
        case "C-ECHO":
          sub = derived(
            req,
            "GET",
            "/studies",
            new URLSearchParams({ limit: "1" }),
            "application/dicom+json",
          );
          break;
        case "C-FIND": {
          const q = qidoRequest(await identifier());
          sub = derived(req, "GET", q.path, q.query, "application/dicom+json");
          break;
        }
        case "C-GET":
        case "C-MOVE":
          sub = derived(
            req,
            "GET",
            wadoPath(await identifier()),
            new URLSearchParams(),
            DICOM_MULTIPART,
          );
          break;
        default: {
          const stow = stowBody([await req.body.bytes()]);
          sub = derived(req, "POST", "/studies", new URLSearchParams(), "application/dicom+json");
          sub.headers.set("content-type", stow.contentType);
          sub.body = new Body(stow.body, stow.contentType);
        }
      }
    } catch (err) {
      throw causedError(400, "invalid_dicom_request", (err as Error).message, err);
    }
    const res = await this.#http.invoke(sub, call);
    if (res.status === 404 && op !== "C-STORE" && op !== "C-ECHO") {
      await res.body.bytes().catch(() => {});
      const empty = op === "C-FIND"
        ? ResponseEnvelope.json(200, [], "application/dicom+json")
        : new ResponseEnvelope(200, new Headers(), Body.empty());
      empty.headers.set("x-dicom-status", statusHex(STATUS.success));
      return empty;
    }
    if (res.status >= 400) {
      const text = await res.body.text().catch(() => "");
      throw new GatewayError(
        502,
        "dicomweb_failure",
        `${op} as DICOMweb ${sub.method} ${sub.path} answered ${res.status}: ${text.slice(0, 200)}`,
        { upstream_status: res.status },
      );
    }
    if (op === "C-ECHO") {
      await res.body.bytes().catch(() => {});
      const echo = ResponseEnvelope.json(200, {
        status: statusHex(STATUS.success),
        status_name: "Success",
      });
      echo.headers.set("x-dicom-status", statusHex(STATUS.success));
      return echo;
    }
    res.headers.set(
      "x-dicom-status",
      statusHex(res.status === 202 ? STATUS.warningSubOps : STATUS.success),
    );
    return res;
  }

  /** Close the target pool. */
  close(): void | Promise<void> {
    return this.#http.close();
  }
}

/** An envelope for the upstream call, keeping the original's identity and signal. */
function derived(
  req: RequestEnvelope,
  method: string,
  path: string,
  query: URLSearchParams,
  accept: string,
): Envelope {
  const headers = new Headers({ accept, "accept-encoding": "identity" });
  return new Envelope({
    id: req.id,
    protocol: req.protocol,
    method,
    path,
    headers,
    query,
    metadata: req.metadata,
    endpoint: req.endpoint,
    remoteAddr: req.remoteAddr,
    signal: () => req.signal,
  });
}

/** Build a `dicomweb` backend. */
export async function createDicomwebBackend(
  config: BackendConfig,
  ctx: BuildContext,
): Promise<Backend> {
  return new DicomwebBackend(config, ctx, await loadUpstreamAccess(config, ctx.baseDir));
}
