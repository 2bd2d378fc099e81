/**
 * Spooling: a body read so that it can be sent more than once (to a pipeline's tee destinations)
 * stays in memory up to a threshold and goes to a temporary file beyond it, so that a 200 MiB
 * upload through a tee costs a few chunks of memory, not 200 MiB held until every destination has
 * it. The file is created by Deno.makeTempFile (mode 0600, in the system temporary directory:
 * `TMPDIR`), written as the body arrives, and removed by whoever made the body replayable once its
 * last reader is done; a reader that still has it open keeps reading (POSIX unlink semantics).
 *
 * @module
 */
import { concatChunks, readChunks } from "./body_read.ts";
import type { GatewayError } from "./errors.ts";

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
}

/**
 * Reads `stream` into memory while it stays within `threshold` bytes, else into a temporary file.
 * On any failure (limit, deadline, disk) the file is removed and the error thrown: nothing
 * half-written is left behind.
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
          path = await Deno.makeTempFile({ prefix: "gateway-spool-" });
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
    throw err;
  }
}

/** Removes a spool file; one already gone is fine. */
export async function removeSpool(path: string): Promise<void> {
  await Deno.remove(path).catch(() => {});
}
