/**
 * Received instances filed under `storage_dir` as `<study UID>/<SOP instance UID>.dcm`, through
 * the storage backend's local store (one atomic writer for the gateway): a C-STORE's file goes to
 * a hidden temporary file in `storage_dir` while it arrives (the study is known only once the
 * dataset is in) and is renamed into its study folder, so a reader never sees a partial file.
 * No fsync: like DCMTK's storescp, a stored instance is in the page cache when it is acknowledged.
 */
import { type FileSpool, SPOOL_SLICE } from "../../adapters/dimse/mod.ts";
import { LocalStore, type ReceivedFile } from "../../backends/storage/mod.ts";

/** A UID as a file name: digits in dot-separated components (so never `.` or `..`), 64 at most. */
const SAFE_UID = /^(?=.{1,64}$)[0-9]+(?:\.[0-9]+)*$/;

/** A received instance's temporary file while it arrives. */
export class SpooledInstance implements FileSpool {
  readonly file: ReceivedFile;

  constructor(file: ReceivedFile) {
    this.file = file;
  }

  /** The next bytes of the file. */
  write(bytes: Uint8Array): void {
    this.file.write(bytes);
  }

  /** The transfer broke off: the temporary file is removed. */
  abort(): void {
    this.file.abort();
  }
}

/** Writes Part 10 files under one directory. */
export class InstanceStore {
  readonly dir: string;
  readonly #store: LocalStore;

  constructor(dir: string) {
    this.dir = dir;
    this.#store = new LocalStore(dir);
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
  spool(sopInstanceUid: string): SpooledInstance | undefined {
    if (!SAFE_UID.test(sopInstanceUid)) return undefined;
    return new SpooledInstance(this.#store.receive(sopInstanceUid));
  }

  /** Complete a spooled instance and move it to its place; returns its path. */
  commit(spool: SpooledInstance, studyUid: string, sopInstanceUid: string): Promise<string> {
    const folder = SAFE_UID.test(studyUid) ? studyUid : "unknown-study";
    return this.#store.place(spool.file, `${folder}/${sopInstanceUid}.dcm`, false);
  }
}
