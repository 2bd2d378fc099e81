/**
 * Transforms by id (SPEC, Transform behavior 2). A `spec_path` that is a transform id file name —
 * a UUID followed by `.json`, directly in `transforms_path` — names a transform of the cloud
 * service. While the cloud integration holds a machine token, such a file that is missing is
 * downloaded from `GET /api/gateway/transforms/{id}` into `transforms_path` (atomic write) before
 * the pipeline is built; the sync also refreshes every transform a pulled configuration lists
 * whose local file differs from the cloud's SHA-256. A download is compiled before it is written,
 * so an invalid spec never replaces a file.
 */
import { join } from "node:path";
import { parseSpec } from "../../shared/jolt/mod.ts";
import { FileTransformSource, type TransformSource } from "../middleware/mod.ts";
import { writeFileAtomic } from "../../shared/mod.ts";
import type { ApplyError, CloudClient } from "./client.ts";

/** A transform id file name: `<uuid>.json`. */
export const TRANSFORM_ID_FILE =
  /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.json$/i;

/** The transform id a `spec_path` names, or null when it is an ordinary file path. */
export function transformIdOf(specPath: string): string | null {
  return TRANSFORM_ID_FILE.exec(specPath)?.[1].toLowerCase() ?? null;
}

/** Hex SHA-256 of a text's UTF-8 bytes. */
export async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** Downloads transform specs with the held machine token. */
export class TransformFetcher {
  readonly #client: CloudClient;
  readonly #token: () => string | undefined;
  readonly #count: (ok: boolean) => void;

  constructor(client: CloudClient, token: () => string | undefined, count: (ok: boolean) => void) {
    this.#client = client;
    this.#token = token;
    this.#count = count;
  }

  /** True while a machine token is held. */
  get available(): boolean {
    return this.#token() !== undefined;
  }

  /** Downloads and compiles transform `id`; the text is answered only when it is a valid spec. */
  async fetch(id: string, expectedSha256?: string, signal?: AbortSignal): Promise<string> {
    const token = this.#token();
    if (!token) throw new Error("no machine token is held");
    try {
      const text = await this.#client.downloadTransform(token, id, signal);
      if (expectedSha256 && await sha256Hex(text) !== expectedSha256) {
        throw new Error("the download does not match the SHA-256 the configuration lists");
      }
      try {
        parseSpec(text);
      } catch (err) {
        throw new Error(`the downloaded spec is invalid: ${(err as Error).message}`, {
          cause: err,
        });
      }
      this.#count(true);
      return text;
    } catch (err) {
      this.#count(false);
      throw err;
    }
  }
}

/** Writes a transform's text as `<id>.json` under `dir`, atomically. */
export async function saveTransform(dir: string, id: string, text: string): Promise<string> {
  const file = join(dir, `${id}.json`);
  await writeFileAtomic(file, text, { mode: 0o644, dirMode: 0o755 });
  return file;
}

/** What a pulled configuration lists of a transform. */
export interface ListedTransform {
  id: string;
  sha256: string;
}

/**
 * Brings the files of `listed` in `dir` up to date (downloading those missing or different);
 * answers one problem per transform that could not be brought up to date.
 */
export async function syncTransforms(
  dir: string,
  listed: ListedTransform[],
  fetcher: TransformFetcher,
  signal?: AbortSignal,
): Promise<ApplyError[]> {
  const problems: ApplyError[] = [];
  for (const t of listed) {
    const id = transformIdOf(`${t.id}.json`);
    if (!id) {
      problems.push({ path: `transforms.${t.id}`, message: "not a transform id (a UUID)" });
      continue;
    }
    const file = join(dir, `${id}.json`);
    const local = await Deno.readTextFile(file).catch(() => undefined);
    if (local !== undefined && await sha256Hex(local) === t.sha256) continue;
    try {
      await saveTransform(dir, id, await fetcher.fetch(id, t.sha256, signal));
    } catch (err) {
      problems.push({
        path: `transforms.${id}`,
        message: `cannot download transform ${id}: ${(err as Error).message}`,
      });
    }
  }
  return problems;
}

/**
 * The transform source of builds while the cloud is enabled: files under `transforms_path`, and
 * a missing transform id file downloaded first.
 */
export class CloudTransformSource implements TransformSource {
  readonly #files: FileTransformSource;
  readonly #fetcher: TransformFetcher;

  constructor(root: string, fetcher: TransformFetcher) {
    this.#files = new FileTransformSource(root);
    this.#fetcher = fetcher;
  }

  /** The absolute file of `specPath` (never outside `transforms_path`). */
  resolve(specPath: string): string {
    return this.#files.resolve(specPath);
  }

  /** The spec text; a missing transform id file is downloaded and saved first. */
  async read(specPath: string): Promise<string> {
    const id = transformIdOf(specPath);
    const file = this.#files.resolve(specPath);
    const exists = await Deno.stat(file).then(() => true, () => false);
    if (exists || id === null) return await this.#files.read(specPath);
    if (!this.#fetcher.available) {
      throw new Error(
        `transform file ${file} does not exist, and it cannot be downloaded from the cloud ` +
          "service without a machine token (run `gwcli gateway:authorize`)",
      );
    }
    let text: string;
    try {
      text = await this.#fetcher.fetch(id);
    } catch (err) {
      throw new Error(
        `transform file ${file} does not exist, and downloading transform ${id} from the ` +
          `cloud service failed: ${(err as Error).message}`,
      );
    }
    await writeFileAtomic(file, text, { mode: 0o644, dirMode: 0o755 });
    return text;
  }
}
