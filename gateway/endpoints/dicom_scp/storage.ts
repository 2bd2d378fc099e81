/**
 * Received instances written to `storage_dir` atomically: `<study UID>/<SOP instance UID>.dcm`,
 * written under a temporary name in the same directory and renamed, so a reader never sees a
 * partial file.
 */
import { join } from "node:path";

const SAFE_UID = /^[0-9.]{1,64}$/;

/** Writes Part 10 files under one directory. */
export class InstanceStore {
  readonly dir: string;
  readonly #made = new Set<string>();

  constructor(dir: string) {
    this.dir = dir;
  }

  /** Write one instance; returns its path. UIDs that are not UIDs are refused. */
  async write(studyUid: string, sopInstanceUid: string, file: Uint8Array): Promise<string> {
    if (!SAFE_UID.test(sopInstanceUid)) {
      throw new Error(`invalid SOP instance UID ${sopInstanceUid}`);
    }
    const folder = join(this.dir, SAFE_UID.test(studyUid) ? studyUid : "unknown-study");
    if (!this.#made.has(folder)) {
      await Deno.mkdir(folder, { recursive: true });
      this.#made.add(folder);
    }
    const path = join(folder, `${sopInstanceUid}.dcm`);
    const tmp = join(folder, `.${sopInstanceUid}.${crypto.randomUUID()}.tmp`);
    try {
      await Deno.writeFile(tmp, file);
      await Deno.rename(tmp, path);
    } catch (err) {
      await Deno.remove(tmp).catch(() => {});
      throw err;
    }
    return path;
  }
}
