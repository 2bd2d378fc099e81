/** Small file-system helpers of the local store: full writes, directory creation and syncing. */
import { describeDiskError, diskErrorCode } from "../../disk/mod.ts";
import { GatewayError } from "../../errors.ts";

/** Write all of `bytes` (a single write may be partial). */
export async function writeAll(file: Deno.FsFile, bytes: Uint8Array): Promise<void> {
  let offset = 0;
  while (offset < bytes.byteLength) {
    offset += await file.write(offset === 0 ? bytes : bytes.subarray(offset));
  }
}

/** The directory part and the last segment of a path. */
export function splitPath(path: string): { dir: string; name: string } {
  const slash = path.lastIndexOf("/");
  return { dir: path.slice(0, slash), name: path.slice(slash + 1) };
}

/**
 * Create `dir` (under the existing-or-creatable `root`) and the directories between them,
 * returning the directories whose entries changed and must be synced for durability: the parent
 * of each directory created.
 */
export async function makeDirs(root: string, dir: string): Promise<string[]> {
  try {
    if ((await Deno.stat(dir)).isDirectory) return [];
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  await Deno.mkdir(root, { recursive: true });
  const changed: string[] = [];
  let current = root;
  for (const segment of dir.slice(root.length + 1).split("/")) {
    const next = `${current}/${segment}`;
    try {
      await Deno.mkdir(next);
      changed.push(current);
    } catch (err) {
      if (!(err instanceof Deno.errors.AlreadyExists)) throw err;
    }
    current = next;
  }
  return changed;
}

/** fsync a directory so the entries created or renamed in it survive a crash. */
export async function syncDir(dir: string): Promise<void> {
  const handle = await Deno.open(dir, { read: true });
  try {
    await handle.sync();
  } finally {
    handle.close();
  }
}

/** True when `err` is one of the file-system errors that mean "nothing there". */
export function isNotFound(err: unknown): boolean {
  return err instanceof Deno.errors.NotFound || err instanceof Deno.errors.NotADirectory;
}

/**
 * Map a file-system error of the local store to a client-facing error; `op` says whether the
 * request was storing (a disk that refuses writes is 507) or reading (an I/O error is 500).
 */
export function fsError(err: unknown, path: string, op: "write" | "read" = "write"): GatewayError {
  if (err instanceof GatewayError) return err;
  const code = (err as { code?: string })?.code;
  const message = (err as Error)?.message ?? String(err);
  const disk = diskErrorCode(err);
  if (disk === "ENOSPC" || disk === "EDQUOT") {
    return new GatewayError(507, "insufficient_storage", `no space left to store "${path}"`);
  }
  if (disk && op === "write") {
    // A failing or read-only disk: this request fails, the backend keeps serving reads.
    return new GatewayError(
      507,
      "insufficient_storage",
      `the disk refuses to store "${path}": ${describeDiskError(disk)}`,
    );
  }
  if (
    err instanceof Deno.errors.NotADirectory || err instanceof Deno.errors.IsADirectory ||
    code === "ENOTEMPTY" || code === "EEXIST"
  ) {
    return new GatewayError(
      409,
      "storage_path_conflict",
      `"${path}" conflicts with an existing file or directory on the way to it`,
    );
  }
  return new GatewayError(500, "storage_error", `local storage failed for "${path}": ${message}`);
}
