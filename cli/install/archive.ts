/** Taking the gateway binary out of a release archive (`tar.gz` or `zip`). */
import { unzipSync } from "fflate";
import { CliError } from "../errors.ts";
import { extractTarEntry } from "./tar.ts";

/** The last path segment of an archive entry name. */
export function baseName(name: string): string {
  return name.replace(/\/+$/, "").split("/").pop() ?? name;
}

/**
 * Writes the entry of `archivePath` whose file name is `binary` to `destination` (created with
 * `mode`); returns the entry's name inside the archive.
 */
export async function extractBinary(
  archivePath: string,
  format: "tar.gz" | "zip",
  binary: string,
  destination: string,
  mode = 0o755,
): Promise<string> {
  const wanted = (name: string) => baseName(name) === binary;
  if (format === "zip") {
    let files: Record<string, Uint8Array>;
    try {
      files = unzipSync(await Deno.readFile(archivePath), { filter: (f) => wanted(f.name) });
    } catch (err) {
      throw new CliError(`the zip archive is corrupt: ${(err as Error).message}`, { cause: err });
    }
    const name = Object.keys(files).find((n) => !n.endsWith("/"));
    if (!name) throw new CliError(`the archive has no ${binary}`);
    await Deno.writeFile(destination, files[name], { mode, createNew: true });
    return name;
  }
  const out = await Deno.open(destination, { write: true, createNew: true, mode });
  try {
    const input = await Deno.open(archivePath, { read: true });
    let entry;
    try {
      entry = await extractTarEntry(
        input.readable.pipeThrough(new DecompressionStream("gzip")),
        wanted,
        async (chunk) => {
          let offset = 0;
          while (offset < chunk.byteLength) offset += await out.write(chunk.subarray(offset));
        },
      );
    } catch (err) {
      throw new CliError(`the tar.gz archive is corrupt: ${(err as Error).message}`, {
        cause: err,
      });
    }
    if (!entry) throw new CliError(`the archive has no ${binary}`);
    return entry.name;
  } finally {
    out.close();
  }
}
