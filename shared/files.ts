/**
 * Files written whole or not at all, for the gateway's state and gwcli's local data: the data goes
 * to a temporary sibling created with the final mode (never readable by others, even briefly), is
 * synced, and is renamed over the target (atomic within a file system), so a crash or a concurrent
 * reader never sees half a file.
 */
import { dirname } from "node:path";

/** Options of {@link writeFileAtomic}. */
export interface AtomicWriteOptions {
  /** Permission bits of the file (default 0o600: the owner only). */
  mode?: number;
  /** Permission bits of directories created on the way (default 0o700). */
  dirMode?: number;
}

/** Writes `data` to `path` atomically, creating missing directories. */
export async function writeFileAtomic(
  path: string,
  data: Uint8Array | string,
  options: AtomicWriteOptions = {},
): Promise<void> {
  const mode = options.mode ?? 0o600;
  await Deno.mkdir(dirname(path), { recursive: true, mode: options.dirMode ?? 0o700 });
  const tmp = `${path}.${crypto.randomUUID().slice(0, 8)}.tmp`;
  const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
  try {
    const file = await Deno.open(tmp, { write: true, createNew: true, mode });
    try {
      let written = 0;
      while (written < bytes.byteLength) written += await file.write(bytes.subarray(written));
      await file.sync();
    } finally {
      file.close();
    }
    // The umask may have narrowed the mode; chmod sets exactly what was asked (POSIX only).
    if (Deno.build.os !== "windows") await Deno.chmod(tmp, mode);
    await Deno.rename(tmp, path);
  } catch (err) {
    await Deno.remove(tmp).catch(() => {});
    throw err;
  }
}

/** The text of `path`, or undefined when it does not exist. */
export async function readTextIfExists(path: string): Promise<string | undefined> {
  try {
    return await Deno.readTextFile(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return undefined;
    throw err;
  }
}

/** Removes `path`; true when it existed (a missing file is not an error). */
export async function removeIfExists(path: string): Promise<boolean> {
  try {
    await Deno.remove(path);
    return true;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return false;
    throw err;
  }
}

/** True when `path` exists (a dangling symlink counts). */
export async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return false;
    throw err;
  }
}
