/**
 * A small file written whole or not at all: the bytes go to a temporary file (in `tmpDir`, on the
 * same file system), optionally flushed, then renamed over the target. A failure (a full disk
 * mid-write) removes the temporary file and leaves the target as it was: never an empty or cut
 * file in its place, which is what `Deno.writeTextFile` leaves when the disk is full.
 */
import { basename, join } from "node:path";

/** Options of {@link replaceFile}. */
export interface ReplaceFileOptions {
  /** Directory of the temporary file (default: the target's directory). */
  tmpDir?: string;
  /** fsync the data before the rename. */
  sync?: boolean;
  /** Permission bits of a new file (default 0o600). */
  mode?: number;
}

/** Writes `data` to `path` through a temporary file and a rename; throws with nothing left over. */
export async function replaceFile(
  path: string,
  data: Uint8Array | string,
  options: ReplaceFileOptions = {},
): Promise<void> {
  const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
  const dir = options.tmpDir ?? join(path, "..");
  const tmp = join(dir, `${basename(path)}.${crypto.randomUUID().slice(0, 8)}.tmp`);
  try {
    const file = await Deno.open(tmp, {
      write: true,
      createNew: true,
      mode: options.mode ?? 0o600,
    });
    try {
      let written = 0;
      while (written < bytes.byteLength) written += await file.write(bytes.subarray(written));
      if (options.sync) await file.syncData();
    } finally {
      file.close();
    }
    await Deno.rename(tmp, path);
  } catch (err) {
    await Deno.remove(tmp).catch(() => {});
    throw err;
  }
}
