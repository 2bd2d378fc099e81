/**
 * The temporary file of a LocalStore object written in the order its bytes arrive, before its
 * path is known (a DICOM instance received over DIMSE: its study is known once it is in). Each
 * slice (below 64 KiB) is written at once with a plain write(2) into the page cache, as DCMTK's
 * storescp does: no queue of asynchronous writes that would fall behind while the event loop is
 * busy receiving. Failures are kept and reported by `finish`; `abort` closes and removes the file.
 * `LocalStore.place` puts a finished one at its path.
 */

/** A temporary file filled while an object arrives. */
export class ReceivedFile {
  readonly path: string;
  #file: Deno.FsFile | undefined;
  #error: unknown;
  #done = false;

  /** Creates `path` (a new file) in `folder`, made if missing. */
  constructor(path: string, folder: string) {
    this.path = path;
    try {
      this.#file = open(path, folder);
    } catch (err) {
      this.#error = err;
    }
  }

  /** Write the next bytes. */
  write(bytes: Uint8Array): void {
    if (this.#done || this.#error !== undefined) return;
    try {
      let at = 0;
      while (at < bytes.byteLength) at += this.#file!.writeSync(bytes.subarray(at));
    } catch (err) {
      this.#error = err;
    }
  }

  /** Close the file, its data flushed to the disk first when `sync`; throws the first failure. */
  finish(sync = false): void {
    this.#done = true;
    try {
      if (sync && this.#error === undefined) this.#file?.syncDataSync();
    } catch (err) {
      this.#error = err;
    }
    this.#close();
    if (this.#error !== undefined) throw this.#error;
  }

  /** Drop the file (the transfer broke off). */
  abort(): void {
    if (this.#done) return;
    this.#done = true;
    this.#close();
    try {
      Deno.removeSync(this.path);
    } catch {
      // never created
    }
  }

  #close(): void {
    this.#file?.close();
    this.#file = undefined;
  }
}

function open(path: string, folder: string): Deno.FsFile {
  const options = { write: true, createNew: true };
  try {
    return Deno.openSync(path, options);
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
    Deno.mkdirSync(folder, { recursive: true });
    return Deno.openSync(path, options);
  }
}
