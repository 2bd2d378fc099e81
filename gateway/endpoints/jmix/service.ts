/**
 * What each JMIX route does, as the one backend the endpoint's pipeline run calls (so the
 * pipeline's middleware still act on the request and the response). It reads and writes through
 * the pipeline's `storage` backend and retrieves studies through its `dicom_scu` backend.
 */
import { JmixInvalid, readZip, validatePackage, ZipError } from "../../../shared/jmix/mod.ts";
import { Body, type RequestEnvelope, ResponseEnvelope } from "../../envelope.ts";
import { GatewayError } from "../../errors.ts";
import type { Backend, BackendCall } from "../../pipeline/mod.ts";
import { PackageRepository } from "./repository.ts";
import { packageOfStudy, retrieveStudy } from "./retrieve.ts";
import { isUid, type JmixRoute } from "./routes.ts";
import type { JmixSettings } from "./settings.ts";

/** Content types a package upload may declare (none is accepted too). */
const ZIP_TYPES = new Set([
  "application/zip",
  "application/x-zip-compressed",
  "application/octet-stream",
]);

/** The backends a JMIX endpoint works with. */
export interface JmixBackends {
  storage: Backend;
  scu?: Backend;
}

/** Serves the routes of one JMIX endpoint. */
export class JmixService {
  readonly #settings: JmixSettings;
  readonly #backends: JmixBackends;
  readonly #endpoint: string;
  readonly #prefix: string;

  constructor(settings: JmixSettings, backends: JmixBackends, endpoint: string, prefix: string) {
    this.#settings = settings;
    this.#backends = backends;
    this.#endpoint = endpoint;
    this.#prefix = prefix === "/" ? "" : prefix;
  }

  /** Answer one matched route. */
  async serve(
    route: JmixRoute,
    req: RequestEnvelope,
    call: BackendCall,
  ): Promise<ResponseEnvelope> {
    const repo = new PackageRepository(this.#backends.storage, this.#endpoint, req.id, call);
    switch (route.name) {
      case "package":
        return await this.#package(repo, route.id);
      case "manifest":
        return await this.#manifest(repo, route.id);
      case "collection":
        return req.method === "POST" ? await this.#create(repo, req) : await this.#query(repo, req);
    }
  }

  #location(id: string): string {
    return `${this.#prefix}/api/jmix/${id}`;
  }

  async #package(repo: PackageRepository, id: string): Promise<ResponseEnvelope> {
    const res = await repo.openPackage(id);
    if (!res) throw notFound(id);
    return this.#zipResponse(res, id);
  }

  #zipResponse(res: ResponseEnvelope, id: string): ResponseEnvelope {
    const body = res.body.forwardable();
    const out = new ResponseEnvelope(
      200,
      new Headers(),
      new Body(body, "application/zip", undefined, res.body.knownLength, false),
      this.#backends.storage.name,
    );
    for (const h of ["content-length", "etag", "last-modified", "repr-digest"]) {
      const v = res.headers.get(h);
      if (v) out.headers.set(h, v);
    }
    out.headers.set("content-disposition", `attachment; filename="${id}.zip"`);
    out.headers.set("x-jmix-id", id);
    out.headers.set("content-location", this.#location(id));
    return out;
  }

  async #manifest(repo: PackageRepository, id: string): Promise<ResponseEnvelope> {
    let manifest = await repo.readManifest(id);
    if (!manifest) {
      const s = this.#settings;
      const zip = await repo.readPackage(
        id,
        Math.max(s.maxPackageBytes, s.limits.maxUncompressedBytes),
      );
      if (!zip) throw notFound(id);
      manifest = readZip(zip, s.limits).get("manifest.json") ?? null;
      if (!manifest) {
        throw new GatewayError(500, "invalid_stored_package", `package ${id} has no manifest`);
      }
    }
    const res = new ResponseEnvelope(200, new Headers(), new Body(manifest, "application/json"));
    res.headers.set("x-jmix-id", id);
    res.backend = this.#backends.storage.name;
    return res;
  }

  async #query(repo: PackageRepository, req: RequestEnvelope): Promise<ResponseEnvelope> {
    const uid = req.query.get("studyInstanceUid");
    if (!uid) {
      throw new GatewayError(
        400,
        "missing_study_instance_uid",
        "query studyInstanceUid is required",
      );
    }
    if (!isUid(uid)) {
      throw new GatewayError(400, "invalid_study_instance_uid", `"${uid}" is not a DICOM UID`);
    }
    return await repo.exclusive(uid, async () => {
      const entry = await repo.study(uid);
      const latest = entry?.packages.at(-1);
      if (latest) {
        const res = await repo.openPackage(latest.id);
        if (res) return this.#zipResponse(res, latest.id);
      }
      const scu = this.#backends.scu;
      if (!scu) {
        throw new GatewayError(404, "package_not_found", `no package for study ${uid}`);
      }
      const files = await retrieveStudy(scu, uid, this.#endpoint, req.id, repo.call);
      if (files.length === 0) {
        throw new GatewayError(404, "study_not_found", `the PACS has no instance of study ${uid}`);
      }
      const keys = await this.#settings.keys();
      const pkg = await packageOfStudy(files, this.#settings.senderName, keys, uid);
      await repo.storePackage(pkg.id, pkg.zip, pkg.manifestBytes);
      await repo.addToIndex(uid, pkg.id);
      const res = new ResponseEnvelope(
        200,
        new Headers(),
        new Body(pkg.zip, "application/zip"),
        scu.name,
      );
      res.headers.set("content-disposition", `attachment; filename="${pkg.id}.zip"`);
      res.headers.set("x-jmix-id", pkg.id);
      res.headers.set("x-jmix-created", "true");
      res.headers.set("content-location", this.#location(pkg.id));
      return res;
    });
  }

  async #create(repo: PackageRepository, req: RequestEnvelope): Promise<ResponseEnvelope> {
    const type = (req.body.contentType ?? "").split(";")[0].trim().toLowerCase();
    if (type && !ZIP_TYPES.has(type)) {
      throw new GatewayError(415, "unsupported_media_type", `a JMIX package is a zip, not ${type}`);
    }
    const zip = await req.body.bytes();
    const keys = await this.#settings.keys();
    let valid;
    try {
      valid = await validatePackage(zip, {
        limits: this.#settings.limits,
        verifyKeys: keys.verify,
        requireSignature: this.#settings.requireSignature,
        decryptionKey: keys.decryption,
      });
    } catch (err) {
      throw packageError(err);
    }
    const id = valid.manifest.id.toLowerCase();
    await repo.storePackage(id, zip, valid.entries.get("manifest.json")!);
    const studies = valid.metadata?.studies.map((s) => s.study_instance_uid) ?? [];
    for (const uid of studies) await repo.addToIndex(uid, id);
    const res = ResponseEnvelope.json(201, {
      id,
      status: "stored",
      studies,
      location: this.#location(id),
    });
    res.headers.set("location", this.#location(id));
    res.backend = this.#backends.storage.name;
    return res;
  }
}

function notFound(id: string): GatewayError {
  return new GatewayError(404, "package_not_found", `no package with id ${id}`);
}

/** A validation failure as the client error it is. */
export function packageError(err: unknown): unknown {
  if (err instanceof ZipError) {
    if (err.kind === "not_zip") return new GatewayError(415, "not_a_zip", err.message);
    if (err.kind === "too_large") return new GatewayError(413, "package_too_large", err.message);
    return new GatewayError(400, "invalid_package", err.message);
  }
  if (err instanceof JmixInvalid) {
    return new GatewayError(400, "invalid_package", err.message, { problems: err.problems });
  }
  return err;
}
