/**
 * Digests of a JMIX package. `payload_hash` is `sha256:` followed by the hex SHA-256 of the text
 * made of one line per payload file, sorted by path (byte order), each
 * `<hex sha256 of the file>  <path relative to payload/>\n` (the output of `sha256sum`), so
 * `cd payload && find . -type f -printf '%P\n' | LC_ALL=C sort | xargs sha256sum | sha256sum`
 * reproduces it.
 */

const ENCODER = new TextEncoder();

/** Hex SHA-256 of bytes. */
export async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes as BufferSource));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Byte-order comparison of two strings (as their UTF-8 encodings). */
export function compareBytes(a: string, b: string): number {
  const x = ENCODER.encode(a);
  const y = ENCODER.encode(b);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] - y[i];
  return x.length - y.length;
}

/** `sha256:<hex>` over payload files keyed by their path relative to `payload/`. */
export async function payloadHash(files: Map<string, Uint8Array>): Promise<string> {
  const lines: string[] = [];
  for (const path of [...files.keys()].sort(compareBytes)) {
    lines.push(`${await sha256Hex(files.get(path)!)}  ${path}\n`);
  }
  return `sha256:${await sha256Hex(ENCODER.encode(lines.join("")))}`;
}
