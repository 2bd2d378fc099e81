/**
 * Copying one regular file out of a tar archive (the gateway binary of a release), streamed through
 * `modern-tar`'s decoder (POSIX ustar, pax and GNU long names; header checksums verified). No entry
 * is written to disk by name, so `../` paths in an archive can do no harm.
 */
import { createTarDecoder } from "modern-tar";

/** An entry found in an archive. */
export interface TarEntry {
  name: string;
  size: number;
  mode: number;
}

/** The decoder's errors, in the words this module has always used. */
function describe(err: unknown): Error {
  const message = (err as Error)?.message ?? String(err);
  if (/checksum/i.test(message)) return new Error("corrupt tar archive (header checksum)");
  if (/unexpected end|truncated|incomplete|eof/i.test(message)) {
    return new Error("truncated tar archive");
  }
  return new Error(`corrupt tar archive (${message})`);
}

/**
 * Reads `stream` until the first regular file for which `wanted(name)` is true and copies its
 * bytes to `sink`; resolves with the entry, or null when the archive has none.
 */
export async function extractTarEntry(
  stream: ReadableStream<Uint8Array>,
  wanted: (name: string) => boolean,
  sink: (chunk: Uint8Array) => Promise<void>,
): Promise<TarEntry | null> {
  const entries = stream.pipeThrough(createTarDecoder({ strict: true }));
  const reader = entries.getReader();
  try {
    for (;;) {
      const { value: entry, done } = await reader.read().catch((err) => {
        throw describe(err);
      });
      if (done) return null;
      const { header } = entry;
      if ((header.type ?? "file") !== "file" || !wanted(header.name)) {
        await entry.body.cancel();
        continue;
      }
      let copied = 0;
      try {
        for await (const chunk of entry.body) {
          copied += chunk.byteLength;
          await sink(chunk);
        }
      } catch (err) {
        throw describe(err);
      }
      if (copied !== header.size) throw new Error("truncated tar archive");
      return { name: header.name, size: header.size, mode: header.mode ?? 0o644 };
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}
