/**
 * One queued message as one file: `GWQ1`, the header's length (u32, big endian), the header (JSON:
 * what the request was), the body bytes, and the SHA-256 of everything before it. Written to a
 * temporary name, flushed, then renamed into place (and the directory flushed): a crash leaves
 * either a whole, checked message or a temporary file that the next start removes. A message
 * whose checksum does not match is never delivered.
 */
import { createHash } from "node:crypto";
import { join } from "node:path";
import { diskErrorCode } from "../disk/mod.ts";

const MAGIC = new TextEncoder().encode("GWQ1");
const CHECKSUM_BYTES = 32;
/** Largest header accepted when reading a message back. */
const MAX_HEADER_BYTES = 1024 * 1024;

/** What a queued request was: enough to send it again as it came. */
export interface MessageHeader {
  id: string;
  backend: string;
  pipeline: string;
  endpoint: string;
  protocol: string;
  /** ms since the epoch. */
  accepted_at: number;
  method: string;
  path: string;
  /** `?…` or empty. */
  query: string;
  /** Request headers, credentials left out (the backend's own apply at delivery). */
  headers: [string, string][];
  metadata: Record<string, string>;
  content_type: string | null;
}

/** A message's file, checked. */
export interface StoredMessage {
  header: MessageHeader;
  /** Offset and length of the body in the file. */
  bodyOffset: number;
  bodyLength: number;
  size: number;
}

/**
 * A failure to write a message (a full disk, a size limit), with the bytes left behind removed.
 * `noSpace`: the disk refused the write (ENOSPC, EDQUOT, EIO or EROFS: gateway/disk).
 */
export class MessageWriteError extends Error {
  constructor(message: string, readonly noSpace: boolean, options?: ErrorOptions) {
    super(message, options);
  }
}

async function writeAll(file: Deno.FsFile, bytes: Uint8Array): Promise<void> {
  let written = 0;
  while (written < bytes.length) written += await file.write(bytes.subarray(written));
}

/** Flushes a directory's entries (the rename of a new file) to disk. */
export async function syncDir(dir: string): Promise<void> {
  try {
    using d = await Deno.open(dir, { read: true });
    await d.sync();
  } catch {
    // Some filesystems cannot open or sync directories; the file itself was synced.
  }
}

/**
 * Writes a message: header, then `body` (bytes or a stream, never held whole), then the
 * checksum, into `tmpDir`, flushed when `fsync`, renamed into `readyDir`. `limit` bounds the
 * body; past it the write fails and leaves nothing. Returns the file's size.
 */
export async function writeMessage(
  tmpDir: string,
  readyDir: string,
  header: MessageHeader,
  body: Uint8Array | ReadableStream<Uint8Array> | null,
  options: { fsync: boolean; limit: number },
): Promise<number> {
  const tmp = join(tmpDir, `${header.id}.tmp`);
  const hash = createHash("sha256");
  const headerBytes = new TextEncoder().encode(JSON.stringify(header));
  const prefix = new Uint8Array(8);
  prefix.set(MAGIC, 0);
  new DataView(prefix.buffer).setUint32(4, headerBytes.length);
  let size = 0;
  let file: Deno.FsFile | undefined;
  try {
    file = await Deno.open(tmp, { write: true, createNew: true, mode: 0o600 });
    const out = file;
    for (const part of [prefix, headerBytes]) {
      hash.update(part);
      await writeAll(out, part);
      size += part.length;
    }
    let bodyBytes = 0;
    const put = async (chunk: Uint8Array) => {
      bodyBytes += chunk.length;
      if (bodyBytes > options.limit) {
        throw new MessageWriteError(`the body is over ${options.limit} bytes`, false);
      }
      hash.update(chunk);
      await writeAll(out, chunk);
    };
    if (body instanceof Uint8Array) await put(body);
    else if (body) { for await (const chunk of body) await put(chunk); }
    size += bodyBytes;
    const sum = new Uint8Array(hash.digest());
    await writeAll(out, sum);
    size += sum.length;
    if (options.fsync) await out.sync();
    out.close();
    file = undefined;
    await Deno.rename(tmp, join(readyDir, `${header.id}.msg`));
  } catch (err) {
    file?.close();
    // Nothing half-written stays: the temporary file goes (the rename is the last step).
    await Deno.remove(tmp).catch(() => {});
    if (err instanceof MessageWriteError) throw err;
    const noSpace = diskErrorCode(err) !== undefined;
    // The cause says what the request's answer is (a body that timed out or broke off).
    throw new MessageWriteError((err as Error).message, noSpace, { cause: err });
  }
  if (options.fsync) await syncDir(readyDir);
  return size;
}

async function readExactly(
  file: Deno.FsFile,
  length: number,
  path: string,
): Promise<Uint8Array<ArrayBuffer>> {
  const out = new Uint8Array(length);
  let at = 0;
  while (at < length) {
    const n = await file.read(out.subarray(at));
    if (n === null) throw new Error(`${path}: truncated`);
    at += n;
  }
  return out;
}

/** Reads a message's header and checks its checksum over the whole file; throws when it fails. */
export async function readMessage(path: string): Promise<StoredMessage> {
  using file = await Deno.open(path, { read: true });
  const size = (await file.stat()).size;
  if (size < 8 + CHECKSUM_BYTES) throw new Error(`${path}: truncated`);
  const prefix = await readExactly(file, 8, path);
  if (!MAGIC.every((b, i) => prefix[i] === b)) throw new Error(`${path}: not a queued message`);
  const headLength = new DataView(prefix.buffer).getUint32(4);
  if (headLength > MAX_HEADER_BYTES || 8 + headLength + CHECKSUM_BYTES > size) {
    throw new Error(`${path}: bad header length`);
  }
  const head = await readExactly(file, headLength, path);
  const hash = createHash("sha256").update(prefix).update(head);
  const bodyLength = size - CHECKSUM_BYTES - 8 - headLength;
  const buffer = new Uint8Array(64 * 1024);
  for (let left = bodyLength; left > 0;) {
    const n = await file.read(buffer.subarray(0, Math.min(left, buffer.length)));
    if (n === null) throw new Error(`${path}: truncated`);
    hash.update(buffer.subarray(0, n));
    left -= n;
  }
  const sum = await readExactly(file, CHECKSUM_BYTES, path);
  const expected = new Uint8Array(hash.digest());
  if (!expected.every((b, i) => sum[i] === b)) {
    throw new Error(`${path}: checksum mismatch (the file was damaged)`);
  }
  const header = JSON.parse(new TextDecoder().decode(head)) as MessageHeader;
  return { header, bodyOffset: 8 + headLength, bodyLength, size };
}

/** A message read whole: its header and body. */
export interface SmallMessage {
  header: MessageHeader;
  body: Uint8Array;
}

/**
 * Reads a whole message file of at most `maxBytes` in one read, checks it, and returns its
 * header and body bytes; undefined when the file is larger (read it with readMessage and
 * bodyStream then). Throws when the file is damaged.
 */
export async function readSmallMessage(
  path: string,
  maxBytes: number,
  into?: Uint8Array<ArrayBuffer>,
): Promise<SmallMessage | undefined> {
  const bytes = await readAtMost(path, maxBytes, into);
  if (bytes === undefined) return undefined;
  const size = bytes.length;
  if (size < 8 + CHECKSUM_BYTES) throw new Error(`${path}: truncated`);
  if (!MAGIC.every((b, i) => bytes[i] === b)) throw new Error(`${path}: not a queued message`);
  const headLength = new DataView(bytes.buffer, bytes.byteOffset).getUint32(4);
  if (headLength > MAX_HEADER_BYTES || 8 + headLength + CHECKSUM_BYTES > size) {
    throw new Error(`${path}: bad header length`);
  }
  const end = size - CHECKSUM_BYTES;
  // In fresh memory, WebCrypto hashes off the main thread (a 525 KB instance: about 0.3 ms of
  // CPU); in reused memory node:crypto hashes in place (WebCrypto's copy would be fresh memory).
  const expected = into
    ? new Uint8Array(createHash("sha256").update(bytes.subarray(0, end)).digest())
    : new Uint8Array(await crypto.subtle.digest("SHA-256", bytes.subarray(0, end)));
  if (!expected.every((b, i) => bytes[end + i] === b)) {
    throw new Error(`${path}: checksum mismatch (the file was damaged)`);
  }
  const header = JSON.parse(
    new TextDecoder().decode(bytes.subarray(8, 8 + headLength)),
  ) as MessageHeader;
  return { header, body: bytes.subarray(8 + headLength, end) };
}

/**
 * The bytes of a file of at most `maxBytes` (one read into memory of its size, or into `into`
 * when it fits), else undefined.
 */
async function readAtMost(
  path: string,
  maxBytes: number,
  into?: Uint8Array<ArrayBuffer>,
): Promise<Uint8Array<ArrayBuffer> | undefined> {
  using file = await Deno.open(path, { read: true });
  const size = (await file.stat()).size;
  if (size > maxBytes) return undefined;
  if (!into || size > into.length) return await readExactly(file, size, path);
  const out = into.subarray(0, size);
  for (let at = 0; at < size;) {
    const n = await file.read(out.subarray(at));
    if (n === null) throw new Error(`${path}: truncated`);
    at += n;
  }
  return out;
}

/** The body of a checked message as a stream read from its file. */
export function bodyStream(path: string, message: StoredMessage): ReadableStream<Uint8Array> {
  let file: Deno.FsFile | undefined;
  let left = message.bodyLength;
  return new ReadableStream<Uint8Array>({
    async start() {
      file = await Deno.open(path, { read: true });
      await file.seek(message.bodyOffset, Deno.SeekMode.Start);
    },
    async pull(controller) {
      if (left === 0) {
        file?.close();
        file = undefined;
        controller.close();
        return;
      }
      const buf = new Uint8Array(Math.min(64 * 1024, left));
      const n = await file!.read(buf);
      if (n === null) {
        file?.close();
        file = undefined;
        controller.error(new Error(`${path}: shorter than its header says`));
        return;
      }
      left -= n;
      controller.enqueue(buf.subarray(0, n));
    },
    cancel() {
      file?.close();
      file = undefined;
    },
  });
}
