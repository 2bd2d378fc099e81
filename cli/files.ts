/**
 * Local files of gwcli: atomic writes (shared/files.ts), owner-only modes (0600 files, 0700
 * directory).
 */
import { writeFileAtomic as writeShared } from "../shared/mod.ts";

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

export { exists, readTextIfExists, removeIfExists } from "../shared/mod.ts";

/** Writes `data` to `path` atomically with `mode`, its directory created 0700 when missing. */
export function writeFileAtomic(
  path: string,
  data: Uint8Array | string,
  mode = FILE_MODE,
): Promise<void> {
  return writeShared(path, data, { mode, dirMode: DIR_MODE });
}

/** True when the file at `path` is readable or writable by group or others (Unix). */
export async function isGroupOrWorldAccessible(path: string): Promise<boolean> {
  if (isWindows) return false;
  const info = await Deno.stat(path);
  return info.mode !== null && (info.mode & 0o077) !== 0;
}
