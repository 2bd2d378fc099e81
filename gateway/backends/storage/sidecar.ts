/**
 * Sidecar metadata of a local object: `.<name>.meta.json` beside it, holding the content type,
 * size and SHA-256 it was stored with. Each entry names the inode of the data file it describes
 * (a rename keeps the inode), so a reader only ever trusts the entry written for the file it
 * opened: a crash between the two renames of a replacement never pairs new metadata with old
 * content. A writer keeps the entry of the object it replaces until its own rename is done.
 */
import { writeAll } from "./fs_util.ts";

/** One described version of the object. */
export interface SidecarEntry {
  /** Inode of the data file (null where the platform has none: matched by size alone). */
  ino: number | null;
  size: number;
  sha256: string;
  content_type: string;
  stored_at: string;
}

/** The sidecar file's contents. */
export interface Sidecar {
  version: 1;
  entries: SidecarEntry[];
}

/** The sidecar path of the object file `name` in `dir`. */
export function sidecarPath(dir: string, name: string): string {
  return `${dir}/.${name}.meta.json`;
}

/** Read a sidecar; null when missing or unreadable (the object is then served untyped). */
export async function readSidecar(path: string): Promise<Sidecar | null> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch {
    return null;
  }
  try {
    const parsed = JSON.parse(text) as Sidecar;
    return parsed?.version === 1 && Array.isArray(parsed.entries) ? parsed : null;
  } catch {
    return null;
  }
}

/** The entry describing the data file with this inode and size, if any. */
export function entryFor(
  sidecar: Sidecar | null,
  stat: { ino: number | null; size: number },
): SidecarEntry | undefined {
  return sidecar?.entries.find((e) =>
    e.size === stat.size && (stat.ino === null || e.ino === null || e.ino === stat.ino)
  );
}

/**
 * Write a sidecar atomically (temporary file, fsync, rename). `keep` is the entry of the object
 * currently visible, kept so that it stays described if the data rename never happens.
 */
export async function writeSidecar(
  path: string,
  entry: SidecarEntry,
  keep: SidecarEntry | undefined,
): Promise<void> {
  const sidecar: Sidecar = { version: 1, entries: keep ? [entry, keep] : [entry] };
  const tmp = `${path}.${crypto.randomUUID().slice(0, 8)}.tmp`;
  const file = await Deno.open(tmp, { write: true, createNew: true });
  try {
    await writeAll(file, new TextEncoder().encode(JSON.stringify(sidecar)));
    await file.syncData();
  } catch (err) {
    file.close();
    await Deno.remove(tmp).catch(() => {});
    throw err;
  }
  file.close();
  try {
    await Deno.rename(tmp, path);
  } catch (err) {
    await Deno.remove(tmp).catch(() => {});
    throw err;
  }
}
