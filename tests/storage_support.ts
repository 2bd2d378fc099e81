/** Helpers of the storage backend tests: configs, directory listings, raw HTTP uploads. */

/** A gateway config with one `/files` endpoint on a `storage` backend with `options`. */
export function storageConfig(options: string, extra = ""): string {
  return `
[endpoints.files]
service = "http"
[endpoints.files.options]
path_prefix = "/files"

[backends.store]
service = "storage"
${extra}
[backends.store.options]
${options}

[pipelines.files]
endpoints = ["files"]
backends = ["store"]
`;
}

/** Every file under `dir` (relative paths, sorted), hidden ones included. */
export async function listFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (current: string, prefix: string) => {
    let entries: Deno.DirEntry[];
    try {
      entries = await Array.fromAsync(Deno.readDir(current));
    } catch (err) {
      if (err instanceof Deno.errors.NotFound) return;
      throw err;
    }
    for (const entry of entries) {
      const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
      if (entry.isDirectory) await walk(`${current}/${entry.name}`, rel);
      else out.push(rel);
    }
  };
  await walk(dir, "");
  return out.sort();
}

/** Hex SHA-256 of bytes. */
export async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes as BufferSource));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Send a raw HTTP/1.1 request (no client-side path normalization) and read the response. */
export async function rawRequest(
  port: number,
  method: string,
  target: string,
  body = "",
  contentType = "application/octet-stream",
): Promise<{ status: number; text: string }> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    const bytes = new TextEncoder().encode(body);
    const head = `${method} ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n` +
      `Content-Type: ${contentType}\r\nContent-Length: ${bytes.byteLength}\r\n\r\n`;
    await conn.write(new TextEncoder().encode(head));
    if (bytes.byteLength) await conn.write(bytes);
    const chunks: Uint8Array[] = [];
    const buf = new Uint8Array(64 * 1024);
    while (true) {
      const n = await conn.read(buf);
      if (n === null) break;
      chunks.push(buf.slice(0, n));
    }
    const text = new TextDecoder().decode(await new Blob(chunks as BlobPart[]).arrayBuffer());
    const status = Number(text.slice(9, 12));
    return { status, text: text.slice(text.indexOf("\r\n\r\n") + 4) };
  } finally {
    try {
      conn.close();
    } catch {
      // closed by the server
    }
  }
}

/**
 * Start an upload that declares `declared` bytes but sends only `sent` of them, then leaves the
 * connection open; `close()` drops it mid-body, as a client that goes away does.
 */
export async function partialUpload(
  port: number,
  target: string,
  declared: number,
  sent: number,
  method = "PUT",
): Promise<{ close(): void }> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const head = `${method} ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
    `Content-Type: application/octet-stream\r\nContent-Length: ${declared}\r\n\r\n`;
  await conn.write(new TextEncoder().encode(head));
  const chunk = new Uint8Array(64 * 1024).fill(7);
  for (let done = 0; done < sent; done += chunk.byteLength) {
    const n = Math.min(chunk.byteLength, sent - done);
    let off = 0;
    while (off < n) off += await conn.write(chunk.subarray(off, n));
  }
  return {
    close() {
      try {
        conn.close();
      } catch {
        // already closed
      }
    },
  };
}

/** Poll `check` every 20 ms until it is true (or fail after `ms`). */
export async function until(check: () => Promise<boolean>, what: string, ms = 10_000) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`timed out waiting for ${what}`);
}
