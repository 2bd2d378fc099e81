/**
 * Local files of gwcli: atomic writes (a temporary file in the same directory, then a rename, so a
 * reader never sees half a file), owner-only modes (0600 files, 0700 directory).
 */

/** Mode of every file gwcli writes. */
export const FILE_MODE = 0o600;
/** Mode of the data directory. */
export const DIR_MODE = 0o700;

const isWindows = Deno.build.os === "windows";

/** Creates `dir` (and parents) with mode 0700 when missing. */
export async function ensureDir(dir: string, mode = DIR_MODE): Promise<void> {
  await Deno.mkdir(dir, { recursive: true, mode });
}

/** The directory part of `path`. */
export function parentOf(path: string): string {
  const i = Math.max(path.lastIndexOf("/"), path.lastIndexOf("\\"));
  return i <= 0 ? (i === 0 ? path.slice(0, 1) : ".") : path.slice(0, i);
}

/**
 * Writes `data` to `path` atomically with `mode`: creates the directory (0700), writes a
 * temporary sibling created with `mode` (never readable by others, even briefly), syncs it, and
 * renames it over `path`.
 */
export async function writeFileAtomic(
  path: string,
  data: Uint8Array | string,
  mode = FILE_MODE,
): Promise<void> {
  const dir = parentOf(path);
  await ensureDir(dir);
  const tmp = `${path}.tmp-${crypto.randomUUID().slice(0, 8)}`;
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
    // The umask may have cleared bits of `mode` at creation; set it exactly.
    if (!isWindows) await Deno.chmod(tmp, mode);
    await Deno.rename(tmp, path);
  } catch (err) {
    await Deno.remove(tmp).catch(() => {});
    throw err;
  }
}

/** The text of `path`, or null when it does not exist. */
export async function readTextIfExists(path: string): Promise<string | null> {
  try {
    return await Deno.readTextFile(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return null;
    throw err;
  }
}

/** Removes `path`; true when it existed. */
export async function removeIfExists(path: string): Promise<boolean> {
  try {
    await Deno.remove(path);
    return true;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return false;
    throw err;
  }
}

/** True when `path` exists. */
export async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return false;
    throw err;
  }
}

/** True when the file at `path` is readable or writable by group or others (Unix). */
export async function isGroupOrWorldAccessible(path: string): Promise<boolean> {
  if (isWindows) return false;
  const info = await Deno.stat(path);
  return info.mode !== null && (info.mode & 0o077) !== 0;
}
