/**
 * Where packages and the study index live: in the pipeline's `storage` backend, addressed through
 * its `{path}` placeholder. Packages are `jmix/packages/<id>.zip` (written with POST, so never
 * replaced), their manifests `jmix/manifests/<id>.json` (so the manifest route reads no zip); the
 * index has one object per study, `jmix/index/<StudyInstanceUID>.json`
 * (`{study_instance_uid, packages: [{id, stored_at}]}`, newest last, replaced with PUT under a
 * per-study lock of this process).
 */
import { readLimited } from "../../envelope.ts";
import { Body, RequestEnvelope, type ResponseEnvelope } from "../../envelope.ts";
import { GatewayError } from "../../errors.ts";
import type { Backend, BackendCall } from "../../pipeline/mod.ts";
import { KeyedLock } from "../../backends/storage/mod.ts";

/** One study's entry of the index. */
export interface StudyIndex {
  study_instance_uid: string;
  packages: { id: string; stored_at: string }[];
}

/** Storage path (below `{path}`) of a package. */
export function packagePath(id: string): string {
  return `/jmix/packages/${id}.zip`;
}

/** Storage path (below `{path}`) of a package's manifest copy. */
export function manifestPath(id: string): string {
  return `/jmix/manifests/${id}.json`;
}

/** Storage path (below `{path}`) of a study's index entry. */
export function indexPath(studyUid: string): string {
  return `/jmix/index/${studyUid}.json`;
}

const LOCKS = new KeyedLock();

/** Packages and index in one storage backend. */
export class PackageRepository {
  readonly #storage: Backend;
  readonly #endpoint: string;
  readonly #requestId: string;
  readonly #call: BackendCall;

  /** The backend call this repository works within. */
  get call(): BackendCall {
    return this.#call;
  }

  constructor(storage: Backend, endpoint: string, requestId: string, call: BackendCall) {
    this.#storage = storage;
    this.#endpoint = endpoint;
    this.#requestId = requestId;
    this.#call = call;
  }

  #envelope(method: string, path: string, body?: Body): RequestEnvelope {
    return new RequestEnvelope({
      id: this.#requestId,
      protocol: "http",
      method,
      path,
      originalPath: path,
      metadata: { endpoint: this.#endpoint, service: "jmix", method, path },
      body,
      endpoint: this.#endpoint,
    });
  }

  /** GET an object; null when it does not exist. */
  async #get(path: string): Promise<ResponseEnvelope | null> {
    try {
      const res = await this.#storage.invoke(this.#envelope("GET", path), this.#call);
      if (res.status === 404) {
        await res.body.bytes().catch(() => {});
        return null;
      }
      if (res.status !== 200) throw await storageFailure(res);
      return res;
    } catch (err) {
      if (err instanceof GatewayError && err.code === "object_not_found") return null;
      throw err;
    }
  }

  /** The stored zip of a package as a response (streamed), or null. */
  openPackage(id: string): Promise<ResponseEnvelope | null> {
    return this.#get(packagePath(id));
  }

  /** The bytes of a package (at most `limit`), or null. */
  async readPackage(id: string, limit: number): Promise<Uint8Array | null> {
    const res = await this.#get(packagePath(id));
    if (!res) return null;
    const body = res.body.forwardable();
    if (body instanceof ReadableStream) return await readLimited(body, limit);
    return body ?? new Uint8Array(0);
  }

  /** The stored manifest copy of a package, or null (packages stored before it, or lost). */
  async readManifest(id: string): Promise<Uint8Array | null> {
    const res = await this.#get(manifestPath(id));
    return res ? await res.body.bytes() : null;
  }

  /** Store a new package and a copy of its manifest; 409 `duplicate_package` when the id exists. */
  async storePackage(id: string, zip: Uint8Array, manifest: Uint8Array): Promise<void> {
    await this.#storeZip(id, zip);
    const res = await this.#storage.invoke(
      this.#envelope("PUT", manifestPath(id), new Body(manifest, "application/json")),
      this.#call,
    );
    if (res.status >= 300) throw await storageFailure(res);
    await res.body.bytes().catch(() => {});
  }

  async #storeZip(id: string, zip: Uint8Array): Promise<void> {
    const body = new Body(zip, "application/zip");
    try {
      const res = await this.#storage.invoke(
        this.#envelope("POST", packagePath(id), body),
        this.#call,
      );
      if (res.status !== 201) throw await storageFailure(res);
      await res.body.bytes().catch(() => {});
    } catch (err) {
      if (err instanceof GatewayError && err.code === "object_exists") {
        throw new GatewayError(409, "duplicate_package", `a package with id ${id} exists`);
      }
      throw err;
    }
  }

  /** The index entry of a study, or null. */
  async study(studyUid: string): Promise<StudyIndex | null> {
    const res = await this.#get(indexPath(studyUid));
    if (!res) return null;
    return JSON.parse(await res.body.text()) as StudyIndex;
  }

  /** Add a package to a study's index entry. */
  async addToIndex(studyUid: string, id: string): Promise<void> {
    await LOCKS.run(studyUid, async () => {
      const entry = await this.study(studyUid) ??
        { study_instance_uid: studyUid, packages: [] };
      if (!entry.packages.some((p) => p.id === id)) {
        entry.packages.push({ id, stored_at: new Date().toISOString() });
      }
      const body = Body.fromData(entry);
      const res = await this.#storage.invoke(
        this.#envelope("PUT", indexPath(studyUid), body),
        this.#call,
      );
      if (res.status >= 300) throw await storageFailure(res);
      await res.body.bytes().catch(() => {});
    });
  }

  /** Run `fn` alone for this study within this process (build-once on a query). */
  exclusive<T>(studyUid: string, fn: () => Promise<T>): Promise<T> {
    return LOCKS.run(`build:${studyUid}`, fn);
  }
}

async function storageFailure(res: ResponseEnvelope): Promise<GatewayError> {
  const text = await res.body.text().catch(() => "");
  return new GatewayError(502, "storage_error", `storage answered ${res.status}: ${text}`);
}
