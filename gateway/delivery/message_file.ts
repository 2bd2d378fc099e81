/**
 * One queued message as one file: `GWQ2`, the header's length (u32, big endian), the header (JSON:
 * what the request was), the body bytes, and the CRC-32 (u32, big endian) of everything before it.
 * Written to a temporary name, flushed, then renamed into place (and the directory flushed): a
 * crash leaves either a whole, checked message or a temporary file that the next start removes. A
 * message whose checksum does not match is never delivered. Files of earlier versions (`GWQ1`,
 * ending in the SHA-256 of what comes before) are read and checked as they were written.
 *
 * Why CRC-32: it is there to find a file cut short or damaged on disk, not a forgery (whoever can
 * write the queue directory can write a checksum too). It finds every error burst up to 32 bits
 * and any other damage but one in 2^32, as the CRCs of ext4, Btrfs, iSCSI and Kafka do, at zlib's
 * speed (a 525 KB instance: about 0.01 ms of CPU, against 0.3 ms for SHA-256, on each write and
 * each read back).
 */
import { createHash } from "node:crypto";
import { crc32 } from "node:zlib";
import { join } from "node:path";
import { diskErrorCode } from "../disk/mod.ts";

const MAGIC = new TextEncoder().encode("GWQ2");
/** Checksum bytes at the end of a `GWQ2` file (CRC-32). */
const CHECKSUM_BYTES = 4;
/** The format of earlier versions: `GWQ1`, the same layout ending in a SHA-256. */
const MAGIC_V1 = new TextEncoder().encode("GWQ1");
const CHECKSUM_BYTES_V1 = 32;
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

/** A checksum taken over a message's bytes as they pass, in the format of its file. */
interface RunningSum {
  update(bytes: Uint8Array): void;
  digest(): Uint8Array;
}

/** CRC-32 of `GWQ2` (zlib's), big endian. */
function crcSum(): RunningSum {
  let crc = 0;
  return {
    update(bytes) {
      crc = crc32(bytes, crc);
    },
    digest() {
      const out = new Uint8Array(CHECKSUM_BYTES);
      new DataView(out.buffer).setUint32(0, crc);
      return out;
    },
  };
}

/** SHA-256 of `GWQ1` (files of earlier versions). */
function sha256Sum(): RunningSum {
  const hash = createHash("sha256");
  return {
    update(bytes) {
      hash.update(bytes);
    },
    digest() {
      return new Uint8Array(hash.digest());
    },
  };
}

/** The layout of a file from its first 4 bytes: its checksum and the checksum's size. */
function formatOf(
  bytes: Uint8Array,
  path: string,
): { sum: () => RunningSum; checksumBytes: number } {
  if (MAGIC.every((b, i) => bytes[i] === b)) return { sum: crcSum, checksumBytes: CHECKSUM_BYTES };
  if (MAGIC_V1.every((b, i) => bytes[i] === b)) {
    return { sum: sha256Sum, checksumBytes: CHECKSUM_BYTES_V1 };
  }
  throw new Error(`${path}: not a queued message`);
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((x, i) => b[i] === x);
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
  const sum = crcSum();
  const headerBytes = new TextEncoder().encode(JSON.stringify(header));
  // Magic, length and header in one write.
  const head = new Uint8Array(8 + headerBytes.length);
  head.set(MAGIC, 0);
  new DataView(head.buffer).setUint32(4, headerBytes.length);
  head.set(headerBytes, 8);
  let size = 0;
  let file: Deno.FsFile | undefined;
  try {
    file = await Deno.open(tmp, { write: true, createNew: true, mode: 0o600 });
    const out = file;
    sum.update(head);
    await writeAll(out, head);
    size += head.length;
    let bodyBytes = 0;
    const put = async (chunk: Uint8Array) => {
      bodyBytes += chunk.length;
      if (bodyBytes > options.limit) {
        throw new MessageWriteError(`the body is over ${options.limit} bytes`, false);
      }
      sum.update(chunk);
      await writeAll(out, chunk);
    };
    if (body instanceof Uint8Array) await put(body);
    else if (body) { for await (const chunk of body) await put(chunk); }
    size += bodyBytes;
    const digest = sum.digest();
    await writeAll(out, digest);
    size += digest.length;
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

/** Reads `out.length` bytes from `file` into `out`; throws when the file ends first. */
async function readInto<T extends Uint8Array>(file: Deno.FsFile, out: T, path: string): Promise<T> {
  for (let at = 0; at < out.length;) {
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
  if (size < 8) throw new Error(`${path}: truncated`);
  const prefix = await readInto(file, new Uint8Array(8), path);
  const format = formatOf(prefix, path);
  const headLength = new DataView(prefix.buffer).getUint32(4);
  if (headLength > MAX_HEADER_BYTES || 8 + headLength + format.checksumBytes > size) {
    throw new Error(`${path}: bad header length`);
  }
  const head = await readInto(file, new Uint8Array(headLength), path);
  const sum = format.sum();
  sum.update(prefix);
  sum.update(head);
  const bodyLength = size - format.checksumBytes - 8 - headLength;
  const buffer = new Uint8Array(64 * 1024);
  for (let left = bodyLength; left > 0;) {
    const n = await file.read(buffer.subarray(0, Math.min(left, buffer.length)));
    if (n === null) throw new Error(`${path}: truncated`);
    sum.update(buffer.subarray(0, n));
    left -= n;
  }
  const stored = await readInto(file, new Uint8Array(format.checksumBytes), path);
  if (!sameBytes(sum.digest(), stored)) {
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
 * bodyStream then). Throws when the file is damaged. `into`: memory to read into when the file
 * fits. `size`: the file's size when the caller knows it (it wrote the file, or listed it at
 * start; a message file never changes): no stat then. A file cut shorter fails its read, and
 * bytes beyond `size` are not the message's.
 */
export async function readSmallMessage(
  path: string,
  maxBytes: number,
  into?: Uint8Array<ArrayBuffer>,
  size?: number,
): Promise<SmallMessage | undefined> {
  const bytes = await readAtMost(path, maxBytes, into, size);
  if (bytes === undefined) return undefined;
  if (bytes.length < 8) throw new Error(`${path}: truncated`);
  const format = formatOf(bytes, path);
  const headLength = new DataView(bytes.buffer, bytes.byteOffset).getUint32(4);
  if (headLength > MAX_HEADER_BYTES || 8 + headLength + format.checksumBytes > bytes.length) {
    throw new Error(`${path}: bad header length`);
  }
  const end = bytes.length - format.checksumBytes;
  const sum = format.sum();
  sum.update(bytes.subarray(0, end));
  if (!sameBytes(sum.digest(), bytes.subarray(end))) {
    throw new Error(`${path}: checksum mismatch (the file was damaged)`);
  }
  const header = JSON.parse(
    new TextDecoder().decode(bytes.subarray(8, 8 + headLength)),
  ) as MessageHeader;
  return { header, body: bytes.subarray(8 + headLength, end) };
}

/**
 * The bytes of a file of at most `maxBytes` (one read into memory of its size, or into `into`
 * when it fits), else undefined. `known`: its size, when the caller knows it (no stat).
 */
async function readAtMost(
  path: string,
  maxBytes: number,
  into?: Uint8Array<ArrayBuffer>,
  known?: number,
): Promise<Uint8Array<ArrayBuffer> | undefined> {
  if (known !== undefined && known > maxBytes) return undefined;
  const memory = (size: number) =>
    into && size <= into.length ? into.subarray(0, size) : new Uint8Array(size);
  if (known !== undefined && known <= SYNC_READ_BYTES) return readNow(path, memory(known));
  using file = await Deno.open(path, { read: true });
  const size = known ?? (await file.stat()).size;
  if (size > maxBytes) return undefined;
  return await readInto(file, memory(size), path);
}

/**
 * Files up to this size whose size is known are read with plain open(2) and read(2) on the
 * calling thread, as storescu reads its files: from the page cache (a message written a moment
 * ago, or read ahead by the kernel) a 525 KB file takes about 0.03 ms, where the two
 * asynchronous operations (each a hand-off to a thread of the runtime and back) cost 0.1 ms of
 * CPU. A file not in the page cache holds the thread for the disk's read of at most this much.
 */
const SYNC_READ_BYTES = 4 << 20;

/** Reads the file at `path` into `out` at once; throws when it is shorter. */
function readNow<T extends Uint8Array>(path: string, out: T): T {
  using file = Deno.openSync(path, { read: true });
  for (let at = 0; at < out.length;) {
    const n = file.readSync(out.subarray(at));
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
