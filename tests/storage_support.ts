/** Helpers of the storage backend tests: configs, directory listings, raw HTTP, s3rver. */
import { freePort, isCi, REPO_ROOT, spawnCaptured, waitReady } from "./support/mod.ts";

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

/** A running s3rver process (see tests/storage_s3rver.ts). */
export interface S3rverProcess {
  /** `http://127.0.0.1:<port>`. */
  endpoint: string;
  /** Where s3rver keeps buckets and objects. */
  dir: string;
  bucket: string;
  /** Path of the file holding the object `key`. */
  objectFile(key: string): string;
  /** Ids of multipart uploads that were started and neither completed nor aborted. */
  pendingUploads(): Promise<string[]>;
  /** The `REQ ...` lines it printed so far. */
  requests(): string[];
  stop(): Promise<void>;
}

/** True when the s3rver npm package is installed (`deno install` fetches it). */
export function s3rverInstalled(): boolean {
  try {
    return Deno.statSync(`${REPO_ROOT}/node_modules/s3rver/package.json`).isFile;
  } catch {
    return false;
  }
}

/**
 * Whether to run the S3 tests: yes when s3rver is installed; else skip with a message naming
 * `deno install`, or under CI=true fail (s3rver is a dependency in deno.json, so CI has it).
 */
export function requireS3rver(): boolean {
  if (s3rverInstalled()) return true;
  const message = "the S3 storage tests need the npm package s3rver: run `deno install`";
  if (isCi()) throw new Error(`${message}; CI=true does not allow skipping them`);
  console.warn(`skipping: ${message}`);
  return false;
}

/** Start s3rver on a free loopback port with an empty `bucket`; `keys` are extra ID:SECRET pairs. */
export async function startS3rver(bucket: string, keys: string[] = []): Promise<S3rverProcess> {
  const dir = await Deno.makeTempDir({ prefix: "gw-s3rver-" });
  const port = freePort();
  const proc = spawnCaptured(Deno.execPath(), [
    "run",
    "--node-modules-dir=manual",
    "--allow-all",
    "tests/storage_s3rver.ts",
    "--dir",
    dir,
    "--port",
    String(port),
    "--bucket",
    bucket,
    "--keys",
    keys.join(","),
  ], {
    cwd: REPO_ROOT,
    env: { DENO_NO_UPDATE_CHECK: "1", NO_COLOR: "1" },
    afterStop: () => Deno.remove(dir, { recursive: true }).catch(() => {}),
  });
  await waitReady(proc, {
    name: "s3rver",
    check: () => Promise.resolve(proc.output().includes(`READY ${port}`)),
    description: `s3rver printed READY ${port}`,
    timeoutMs: 60_000,
    intervalMs: 50,
  });
  return {
    endpoint: `http://127.0.0.1:${port}`,
    dir,
    bucket,
    objectFile: (key) => {
      const parts = key.split("/");
      const last = parts.pop();
      return [dir, bucket, ...parts, `${last}._S3rver_object`].join("/");
    },
    pendingUploads: async () => {
      try {
        const entries = await Array.fromAsync(Deno.readDir(`${dir}/${bucket}/._S3rver_uploads`));
        return entries.map((e) => e.name);
      } catch (err) {
        if (err instanceof Deno.errors.NotFound) return [];
        throw err;
      }
    },
    requests: () => proc.output().split("\n").filter((l) => l.startsWith("REQ ")),
    stop: async () => {
      await proc.stop();
    },
  };
}
