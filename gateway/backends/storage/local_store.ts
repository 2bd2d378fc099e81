/**
 * Objects as plain files under a root directory. Writes stream into a hidden temporary file in
 * the target directory, fsync it, then rename it into place (PUT) or hard-link it only if the name
 * is free (POST), and fsync the directory: readers see the whole object or none of it. A failed,
 * aborted or killed write leaves at most a hidden `.<name>.<id>.tmp` file, which no path can
 * address (segments starting with `.` are refused) and which a failed write removes itself.
 *
 * An object whose path is known only once its bytes are in (a DICOM instance received over DIMSE,
 * filed under its study) is written with `receive` into a hidden temporary file in the root and
 * put in place with `place`: the same rename, the same directory rules, the same sweep of what a
 * killed process left (stale_temporaries.ts).
 */
import { fsError, isNotFound, makeDirs, splitPath, syncDir, writeAll } from "./fs_util.ts";
import { KeyedLock } from "./keyed_lock.ts";
import { checkPath, invalidPath, pathProblem } from "./path_rules.ts";
import { ReceivedFile } from "./received_file.ts";
import { entryFor, readSidecar, type SidecarEntry, sidecarPath, writeSidecar } from "./sidecar.ts";
import { chunksOf, Digest, isSourceFailure } from "./source.ts";
import {
  objectExists,
  type ObjectInfo,
  type ObjectRead,
  type ObjectStore,
  type WriteOptions,
  type WriteResult,
  type WriteSource,
} from "./store.ts";

/** Stores objects as files under `root` (an absolute directory). */
export class LocalStore implements ObjectStore {
  readonly root: string;
  readonly description: string;
  readonly #locks = new KeyedLock();
  #realRoot: string | undefined;
  /** Directories `place` has made (and checked), by full path. */
  readonly #placed = new Map<string, Promise<void>>();

  constructor(root: string) {
    this.root = root;
    this.description = `file://${root}`;
  }

  /** Metadata of the file at `path`, or null. */
  async head(path: string): Promise<ObjectInfo | null> {
    const opened = await this.#open(path);
    if (!opened) return null;
    opened.file.close();
    return opened.info;
  }

  /** Open the file at `path`; the stream closes it when read to the end or cancelled. */
  async read(path: string): Promise<ObjectRead | null> {
    const opened = await this.#open(path);
    if (!opened) return null;
    return { info: opened.info, body: opened.file.readable };
  }

  async #open(path: string): Promise<{ file: Deno.FsFile; info: ObjectInfo } | null> {
    const full = `${this.root}/${path}`;
    let file: Deno.FsFile;
    try {
      file = await Deno.open(full, { read: true });
    } catch (err) {
      if (isNotFound(err)) return null;
      throw fsError(err, path, "read");
    }
    try {
      const stat = await file.stat();
      if (!stat.isFile) {
        file.close();
        return null;
      }
      await this.#checkInside(full, path);
      const { dir, name } = splitPath(full);
      const entry = entryFor(await readSidecar(sidecarPath(dir, name)), stat);
      const info: ObjectInfo = {
        size: stat.size,
        contentType: entry?.content_type ?? null,
        ...(entry ? { sha256: entry.sha256, etag: `"${entry.sha256}"` } : {}),
        ...(stat.mtime ? { modified: stat.mtime } : {}),
      };
      return { file, info };
    } catch (err) {
      file.close();
      throw fsError(err, path, "read");
    }
  }

  /** Stream `source` into `path`, all or nothing. */
  async write(path: string, source: WriteSource, options: WriteOptions): Promise<WriteResult> {
    const full = `${this.root}/${path}`;
    const { dir, name } = splitPath(full);
    let changedDirs: string[];
    try {
      changedDirs = await makeDirs(this.root, dir);
      await this.#checkInside(dir, path);
      // Refuse early, before the body is read; the link below is the authoritative check.
      if (!options.overwrite && await exists(full)) throw objectExists(path);
    } catch (err) {
      throw fsError(err, path);
    }
    const tmp = `${dir}/.${name}.${crypto.randomUUID().slice(0, 8)}.tmp`;
    let file: Deno.FsFile | undefined;
    try {
      file = await Deno.open(tmp, { write: true, createNew: true });
      const digest = new Digest();
      for await (const chunk of chunksOf(source, digest, options.signal)) {
        await writeAll(file, chunk);
      }
      await file.syncData();
      const stat = await file.stat();
      file.close();
      file = undefined;
      const entry: SidecarEntry = {
        ino: stat.ino ?? null,
        size: digest.size,
        sha256: digest.hex(),
        content_type: options.contentType,
        stored_at: new Date().toISOString(),
      };
      const created = await this.#locks.run(
        full,
        () => this.#commit(tmp, full, path, entry, options.overwrite),
      );
      await Promise.all([dir, ...changedDirs].map(syncDir));
      return { size: entry.size, sha256: entry.sha256, created };
    } catch (err) {
      file?.close();
      await Deno.remove(tmp).catch(() => {});
      throw isSourceFailure(err) ? err : fsError(err, path);
    }
  }

  /** Put the synced temporary file in place; true when nothing was there before. */
  async #commit(
    tmp: string,
    full: string,
    path: string,
    entry: SidecarEntry,
    overwrite: boolean,
  ): Promise<boolean> {
    const { dir, name } = splitPath(full);
    const meta = sidecarPath(dir, name);
    let current: Deno.FileInfo | null = null;
    try {
      current = await Deno.stat(full);
    } catch (err) {
      if (!isNotFound(err)) throw fsError(err, path);
    }
    if (current && !overwrite) throw objectExists(path);
    if (current && !current.isFile) throw fsError(new Deno.errors.IsADirectory(), path);
    const keep = current ? entryFor(await readSidecar(meta), current) : undefined;
    try {
      await writeSidecar(meta, entry, keep);
      if (overwrite) {
        await Deno.rename(tmp, full);
      } else {
        // link() fails when the name exists, even if another process took it meanwhile.
        await Deno.link(tmp, full);
        await Deno.remove(tmp);
      }
    } catch (err) {
      if (!overwrite && err instanceof Deno.errors.AlreadyExists) throw objectExists(path);
      throw fsError(err, path);
    }
    return current === null;
  }

  /**
   * A hidden temporary file in the root for an object whose path is not known yet, filled in
   * slices while it arrives; `name` (one path segment) only names the temporary file.
   */
  receive(name: string): ReceivedFile {
    const problem = name.includes("/") ? "has a `/`" : pathProblem(name);
    if (problem) throw invalidPath(`the name of a received file ${problem}; refused`);
    return new ReceivedFile(`${this.root}/.${name}.${crypto.randomUUID()}.tmp`, this.root);
  }

  /**
   * Put a received file at `path`, replacing what is there (no sidecar: the object is untyped).
   * `durable` syncs the data and the directories first, as `write` does; otherwise the object is
   * in the page cache when this resolves, as DCMTK's storescp leaves a received instance. Returns
   * the file's full path; on failure the temporary file is removed.
   */
  async place(file: ReceivedFile, path: string, durable: boolean): Promise<string> {
    const full = `${this.root}/${path}`;
    try {
      checkPath(path, "the path of a received file");
      file.finish(durable);
      const { dir } = splitPath(full);
      const changedDirs = await this.#placeDir(dir, path);
      // A synchronous rename, like the received file's writes: one metadata update, where an
      // asynchronous one waits for a pool thread and then for the event loop (on a loaded
      // machine each wake-up may wait for a core, on the C-STORE's response path).
      await this.#locks.run(full, () => Promise.resolve(Deno.renameSync(file.path, full)));
      if (durable) await Promise.all([dir, ...changedDirs].map(syncDir));
      return full;
    } catch (err) {
      await Deno.remove(file.path).catch(() => {});
      throw fsError(err, path);
    }
  }

  /**
   * Make (once) and check the directory `place` renames into; resolves with the directories that
   * changed on this call (empty once made). A failed attempt is retried next time.
   */
  async #placeDir(dir: string, path: string): Promise<string[]> {
    const made = this.#placed.get(dir);
    if (made) return await made.then(() => []);
    const making = makeDirs(this.root, dir).then(async (changed) => {
      await this.#checkInside(dir, path);
      return changed;
    });
    const done = making.then(() => {});
    done.catch(() => this.#placed.delete(dir));
    this.#placed.set(dir, done);
    return await making;
  }

  /** Remove the file at `path` and its sidecar; false when there was none. */
  remove(path: string): Promise<boolean> {
    const full = `${this.root}/${path}`;
    return this.#locks.run(full, async () => {
      const { dir, name } = splitPath(full);
      try {
        const stat = await Deno.stat(full);
        if (!stat.isFile) return false;
        await this.#checkInside(full, path);
        await Deno.remove(full);
      } catch (err) {
        if (isNotFound(err)) return false;
        throw fsError(err, path);
      }
      await Deno.remove(sidecarPath(dir, name)).catch(() => {});
      await syncDir(dir).catch(() => {});
      return true;
    });
  }

  /** Refuse a path that symbolic links inside the root lead outside it. */
  async #checkInside(full: string, path: string): Promise<void> {
    this.#realRoot ??= await Deno.realPath(this.root);
    const real = await Deno.realPath(full);
    if (real !== this.#realRoot && !real.startsWith(this.#realRoot + "/")) {
      throw invalidPath(`"${path}" leads outside the storage root through a symbolic link`);
    }
  }

  /** Nothing to release. */
  close(): void {}
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch (err) {
    if (isNotFound(err)) return false;
    throw err;
  }
}
