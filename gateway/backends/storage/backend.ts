/**
 * The `storage` backend: GET/HEAD read the object at `read_pattern`, POST creates and PUT
 * replaces the object at `write_pattern`, DELETE removes the object at `read_pattern`.
 */
import type { BackendConfig } from "../../../shared/gateway_config/mod.ts";
import type { Logger } from "../../../shared/mod.ts";
import { Body, type RequestEnvelope, ResponseEnvelope } from "../../envelope.ts";
import { GatewayError } from "../../errors.ts";
import type { Backend, BackendCall } from "../../pipeline/mod.ts";
import { locationOf, type LocationRule, locationRule } from "./location.ts";
import type { StorageSettings } from "./options.ts";
import { decodePath } from "./path_rules.ts";
import { AbortedRead, SourceError } from "./source.ts";
import { abortedError, type ObjectInfo, type ObjectStore } from "./store.ts";
import { type PathTemplate, resolveTemplate } from "./template.ts";

/** Content type of objects stored without one, and of objects whose metadata is lost. */
export const DEFAULT_CONTENT_TYPE = "application/octet-stream";

/** Reads and writes objects in a local directory or an S3 bucket. */
export class StorageBackend implements Backend {
  readonly name: string;
  readonly config: BackendConfig;
  readonly settings: StorageSettings;
  readonly store: ObjectStore;
  readonly #location: LocationRule | undefined;

  constructor(
    config: BackendConfig,
    settings: StorageSettings,
    store: ObjectStore,
    logger: Logger,
  ) {
    this.name = config.name;
    this.config = config;
    this.settings = settings;
    this.store = store;
    this.#location = locationRule(settings.read);
    if (settings.read && settings.write && !this.#location) {
      logger.warn(
        "storage read_pattern is not `{path}` with literal text around it: Location headers " +
          "name the stored path under the endpoint, which GET resolves through read_pattern",
        { backend: config.name, read_pattern: settings.read.source },
      );
    }
  }

  /** Dispatch on the method. */
  async invoke(req: RequestEnvelope, call: BackendCall): Promise<ResponseEnvelope> {
    try {
      switch (req.method) {
        case "GET":
        case "HEAD":
          return await this.#read(req, call);
        case "POST":
          return await this.#write(req, call, false);
        case "PUT":
          return await this.#write(req, call, true);
        case "DELETE":
          return await this.#delete(req, call);
        default:
          return this.#notAllowed(req);
      }
    } catch (err) {
      throw this.#mapError(err, req, call);
    }
  }

  #mapError(err: unknown, req: RequestEnvelope, call: BackendCall): unknown {
    const streamError = req.body.streamError;
    if (streamError) return streamError;
    if (err instanceof GatewayError) return err;
    if (err instanceof AbortedRead || call.signal.aborted) {
      return abortedError(call.signal, this.name, this.config.timeout_secs);
    }
    if (err instanceof SourceError) {
      if (err.cause instanceof GatewayError) return err.cause;
      if (req.signal.aborted) return new GatewayError(499, "client_closed", err.message);
      return new GatewayError(400, "body_read_failed", err.message);
    }
    return new GatewayError(
      500,
      "storage_error",
      `storage backend ${this.name} failed: ${(err as Error)?.message ?? String(err)}`,
    );
  }

  /** Methods that have a pattern to work with. */
  #allowed(): string[] {
    const methods: string[] = [];
    if (this.settings.read) methods.push("GET", "HEAD", "DELETE");
    if (this.settings.write) methods.push("POST", "PUT");
    return methods;
  }

  #notAllowed(req: RequestEnvelope): ResponseEnvelope {
    const allow = this.#allowed();
    const res = ResponseEnvelope.json(405, {
      error: {
        code: "method_not_allowed",
        message: `storage backend ${this.name} does not serve ${req.method} ` +
          `(allowed: ${allow.join(", ")})`,
        request_id: req.id,
      },
    });
    res.headers.set("allow", allow.join(", "));
    res.backend = this.name;
    return res;
  }

  /** Resolve a template for this request. */
  #resolve(template: PathTemplate, req: RequestEnvelope): Promise<string> {
    const raw = req.path.startsWith("/") ? req.path.slice(1) : req.path;
    return resolveTemplate(template, {
      path: template.names.includes("path") ? decodePath(raw) : "",
      metadata: req.metadata,
      data: () => req.body.data(),
      now: new Date(),
      uuid: crypto.randomUUID(),
    });
  }

  async #read(req: RequestEnvelope, call: BackendCall): Promise<ResponseEnvelope> {
    if (!this.settings.read) return this.#notAllowed(req);
    const path = await this.#resolve(this.settings.read, req);
    if (req.method === "HEAD") {
      const info = await this.store.head(path, call.signal);
      if (!info) throw notFound(path);
      return this.#objectResponse(200, info, null);
    }
    const object = await this.store.read(path, call.signal);
    if (!object) throw notFound(path);
    const etag = object.info.etag;
    if (etag && matchesEtag(req.readHeaders.get("if-none-match"), etag)) {
      await object.body.cancel().catch(() => {});
      const res = this.#objectResponse(304, object.info, null);
      res.headers.delete("content-length");
      return res;
    }
    return this.#objectResponse(200, object.info, object.body, req);
  }

  #objectResponse(
    status: number,
    info: ObjectInfo,
    body: ReadableStream<Uint8Array> | null,
    req?: RequestEnvelope,
  ): ResponseEnvelope {
    const headers = new Headers();
    const contentType = info.contentType ?? DEFAULT_CONTENT_TYPE;
    headers.set("content-length", String(info.size));
    if (info.etag) headers.set("etag", info.etag);
    if (info.modified) headers.set("last-modified", info.modified.toUTCString());
    if (info.sha256) headers.set("repr-digest", `sha-256=:${hexToBase64(info.sha256)}:`);
    const resBody = body
      ? new Body(body, contentType, req!.body.limits, info.size, false)
      : new Body(null, contentType);
    return new ResponseEnvelope(status, headers, resBody, this.name);
  }

  async #write(
    req: RequestEnvelope,
    call: BackendCall,
    overwrite: boolean,
  ): Promise<ResponseEnvelope> {
    if (!this.settings.write) return this.#notAllowed(req);
    const path = await this.#resolve(this.settings.write, req);
    const source = req.body.forwardable();
    const length = source instanceof Uint8Array ? source.byteLength : req.body.knownLength;
    const contentType = req.body.contentType ?? DEFAULT_CONTENT_TYPE;
    const result = await this.store.write(path, source, {
      contentType,
      overwrite,
      signal: call.signal,
      length,
    });
    call.logger.debug("storage object stored", {
      request_id: req.id,
      backend: this.name,
      path,
      size: result.size,
      created: result.created,
    });
    const location = locationOf(path, this.#location, req.originalPath, req.path);
    const res = ResponseEnvelope.json(result.created ? 201 : 200, {
      location,
      path,
      size: result.size,
      sha256: result.sha256,
      status: "stored",
    });
    res.headers.set("location", location);
    res.backend = this.name;
    return res;
  }

  async #delete(req: RequestEnvelope, call: BackendCall): Promise<ResponseEnvelope> {
    if (!this.settings.read) return this.#notAllowed(req);
    const path = await this.#resolve(this.settings.read, req);
    if (!await this.store.remove(path, call.signal)) throw notFound(path);
    return new ResponseEnvelope(204, new Headers(), Body.empty(), this.name);
  }

  /** Close the store's clients. */
  async close(): Promise<void> {
    await this.store.close();
  }
}

/** 404 `object_not_found`. */
function notFound(path: string): GatewayError {
  return new GatewayError(404, "object_not_found", `no stored object at "${path}"`);
}

/** True when an If-None-Match header lists `etag` (or is `*`). */
function matchesEtag(header: string | null, etag: string): boolean {
  if (!header) return false;
  return header.split(",").some((t) => {
    const tag = t.trim().replace(/^W\//, "");
    return tag === "*" || tag === etag;
  });
}

/** Hex to base64 (for the RFC 9530 `Repr-Digest` header). */
function hexToBase64(hex: string): string {
  let binary = "";
  for (let i = 0; i < hex.length; i += 2) {
    binary += String.fromCharCode(parseInt(hex.slice(i, i + 2), 16));
  }
  return btoa(binary);
}
