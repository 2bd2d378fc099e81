/**
 * Received instances written to `storage_dir` atomically: `<study UID>/<SOP instance UID>.dcm`,
 * written as `.<SOP instance UID>.<uuid>.tmp` in `storage_dir` and renamed into the study folder,
 * so a reader never sees a partial file. A C-STORE's file is spooled to its temporary file while it
 * arrives (the study is known only once the dataset is in), so only the rename is left at the end.
 * No fsync: like DCMTK's storescp, a stored instance is in the page cache when it is acknowledged.
 */
import { join } from "node:path";
import { SPOOL_SLICE } from "../../adapters/dimse/mod.ts";
import { TempFileSpool } from "./spool.ts";

const SAFE_UID = /^[0-9.]{1,64}$/;

/** Writes Part 10 files under one directory. */
export class InstanceStore {
  readonly dir: string;
  readonly #made = new Map<string, Promise<void>>();

  constructor(dir: string) {
    this.dir = dir;
  }

  /** Write one instance; returns its path. UIDs that are not UIDs are refused. */
  async write(studyUid: string, sopInstanceUid: string, file: Uint8Array): Promise<string> {
    const spool = this.spool(sopInstanceUid);
    if (!spool) throw new Error(`invalid SOP instance UID ${sopInstanceUid}`);
    for (let at = 0; at < file.byteLength; at += SPOOL_SLICE) {
      spool.write(file.subarray(at, at + SPOOL_SLICE));
    }
    return await this.commit(spool, studyUid, sopInstanceUid);
  }

  /**
   * A temporary file that a received instance is written to while it arrives; undefined when the
   * SOP instance UID is not a UID (`write` then refuses the instance).
   */
  spool(sopInstanceUid: string): TempFileSpool | undefined {
    if (!SAFE_UID.test(sopInstanceUid)) return undefined;
    const tmp = join(this.dir, `.${sopInstanceUid}.${crypto.randomUUID()}.tmp`);
    return new TempFileSpool(tmp, this.dir);
  }

  /** Complete a spooled instance and move it to its place; returns its path. */
  async commit(spool: TempFileSpool, studyUid: string, sopInstanceUid: string): Promise<string> {
    try {
      spool.finish();
      const folder = join(this.dir, SAFE_UID.test(studyUid) ? studyUid : "unknown-study");
      await this.#folder(folder);
      const path = join(folder, `${sopInstanceUid}.dcm`);
      await Deno.rename(spool.path, path);
      return path;
    } catch (err) {
      await Deno.remove(spool.path).catch(() => {});
      throw err;
    }
  }

  /** Create a folder once (a failed attempt is retried next time). */
  #folder(path: string): Promise<void> {
    let made = this.#made.get(path);
    if (!made) {
      made = Deno.mkdir(path, { recursive: true });
      made.catch(() => this.#made.delete(path));
      this.#made.set(path, made);
    }
    return made;
  }
}
