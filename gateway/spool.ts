/**
 * Spooling: a body read so that it can be sent more than once (to a pipeline's tee destinations)
 * stays in memory up to a threshold and goes to a temporary file beyond it, so that a 200 MiB
 * upload through a tee costs a few chunks of memory, not 200 MiB held until every destination has
 * it. The file is created by Deno.makeTempFile (mode 0600, in the system temporary directory:
 * `TMPDIR`), written as the body arrives, and removed by whoever made the body replayable once its
 * last reader is done; a reader that still has it open keeps reading (POSIX unlink semantics).
 * A gateway that was killed mid-request leaves its files behind: their names carry the process id,
 * and {@link sweepStaleSpools} (run at start) removes those of processes that are gone.
 *
 * @module
 */
import { concatChunks, readChunks } from "./body_read.ts";
import { describeDiskError, diskErrorCode } from "./disk/mod.ts";
import { GatewayError } from "./errors.ts";

/** A body kept in a temporary file. */
export interface SpoolFile {
  path: string;
  size: number;
}

/** What reading a body with a spool threshold produced. */
export type Spooled = { bytes: Uint8Array } | { file: SpoolFile };

/** Options of {@link readOrSpool}. */
export interface SpoolOptions {
  /** Bytes kept in memory; the body goes to a file once it passes this. */
  threshold: number;
  /** Largest body accepted (413 `overLimit` beyond). */
  limit: number;
  overLimit: (limit: number) => GatewayError;
  /** Milliseconds the whole body may take to arrive (408). */
  deadlineMs?: number;
  /** Directory of the spool file; the system temporary directory (`TMPDIR`) when absent. */
  dir?: string;
}

/**
 * Reads `stream` into memory while it stays within `threshold` bytes, else into a temporary file.
 * On any failure (limit, deadline, disk) the file is removed and the error thrown: nothing
 * half-written is left behind. A disk that refuses the file (full, over quota, failing) is 507
 * `insufficient_storage` for this request only.
 *
 * @example
 * ```ts
 * import { readOrSpool } from "./spool.ts";
 * import { tooLarge } from "./envelope.ts";
 *
 * const body = new Blob([new Uint8Array(64 * 1024)]).stream();
 * const out = await readOrSpool(body, { threshold: 1024, limit: 1 << 20, overLimit: tooLarge });
 * if ("file" in out) await Deno.remove(out.file.path);
 * ```
 */
export async function readOrSpool(
  stream: ReadableStream<Uint8Array>,
  o: SpoolOptions,
): Promise<Spooled> {
  const chunks: Uint8Array[] = [];
  let file: Deno.FsFile | undefined;
  let path: string | undefined;
  const writeAll = async (chunk: Uint8Array) => {
    for (let offset = 0; offset < chunk.byteLength;) {
      offset += await file!.write(chunk.subarray(offset));
    }
  };
  try {
    const total = await readChunks(
      stream,
      o.limit,
      async (chunk, total) => {
        if (!file && total <= o.threshold) {
          chunks.push(chunk);
          return;
        }
        if (!file) {
          path = await Deno.makeTempFile({ dir: o.dir, prefix: spoolPrefix() });
          file = await Deno.open(path, { write: true, truncate: true });
          for (const c of chunks.splice(0)) await writeAll(c);
        }
        await writeAll(chunk);
      },
      o.overLimit,
      o.deadlineMs,
    );
    if (!file) return { bytes: concatChunks(chunks, total) };
    file.close();
    file = undefined;
    return { file: { path: path!, size: total } };
  } catch (err) {
    file?.close();
    if (path) await removeSpool(path);
    const disk = diskErrorCode(err);
    if (disk) {
      throw new GatewayError(
        507,
        "insufficient_storage",
        "the request body cannot be spooled for the pipeline's destinations: the gateway's " +
          "temporary directory refuses writes; nothing was sent",
        undefined,
        describeDiskError(disk),
        { cause: err },
      );
    }
    throw err;
  }
}

const PREFIX = "gateway-spool-";

/** The name prefix of this process's spool files: `gateway-spool-<pid>-`. */
function spoolPrefix(): string {
  return `${PREFIX}${Deno.pid}-`;
}

/** Where spool files go (what Deno.makeTempFile uses). */
function spoolDir(): string {
  return Deno.env.get("TMPDIR") || "/tmp";
}

/** True when process `pid` runs; unknown (no /proc) counts as running. */
function processAlive(pid: number): boolean {
  try {
    Deno.statSync(`/proc/${pid}`);
    return true;
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) return true;
    try {
      Deno.statSync("/proc/self");
      return false; // /proc exists, the process does not.
    } catch {
      return true;
    }
  }
}

/**
 * Removes the spool files of gateway processes that are gone (killed mid-request): files whose
 * process id no longer runs, or, where process ids cannot be checked, older than a day. Returns
 * how many were removed.
 */
export async function sweepStaleSpools(dir: string = spoolDir()): Promise<number> {
  let removed = 0;
  const dayAgo = Date.now() - 24 * 60 * 60 * 1000;
  try {
    for await (const entry of Deno.readDir(dir)) {
      if (!entry.isFile || !entry.name.startsWith(PREFIX)) continue;
      const pid = Number(entry.name.slice(PREFIX.length).split("-")[0]);
      if (pid === Deno.pid) continue;
      const path = `${dir}/${entry.name}`;
      let stale = Number.isInteger(pid) && pid > 0 && !processAlive(pid);
      if (!stale) {
        const mtime = (await Deno.stat(path).catch(() => undefined))?.mtime?.getTime();
        stale = mtime !== undefined && mtime < dayAgo;
      }
      if (stale && await Deno.remove(path).then(() => true, () => false)) removed++;
    }
  } catch {
    // No readable temporary directory: nothing to sweep.
  }
  return removed;
}

/** Removes a spool file; one already gone is fine. */
export async function removeSpool(path: string): Promise<void> {
  await Deno.remove(path).catch(() => {});
}
