/**
 * Streaming an object into S3. A body that fits in one part is buffered (at most one part) and
 * stored with a single PutObject carrying its SHA-256 as object metadata; a larger one becomes a
 * multipart upload with a bounded number of parts in flight, completed only once every byte has
 * arrived, and aborted (AbortMultipartUpload, awaited) on any failure so that no partial object
 * and no orphaned parts remain.
 */
import {
  AbortMultipartUploadCommand,
  type CompletedPart,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  ListPartsCommand,
  PutObjectCommand,
  type S3Client,
  UploadPartCommand,
} from "@aws-sdk/client-s3";
import { chunksOf, Digest } from "./source.ts";
import type { WriteSource } from "./store.ts";

/** Smallest part size S3 allows (except for the last part). */
const MIN_PART_BYTES = 5 * 1024 * 1024;
/** Default part size. */
export const DEFAULT_PART_BYTES = 8 * 1024 * 1024;
/** S3's limit on parts per upload. */
const MAX_PARTS = 10_000;
/** Parts uploading at once (memory: at most this many parts plus the one being filled). */
export const PARTS_IN_FLIGHT = 2;
/** AbortMultipartUpload calls at most, until ListParts answers NoSuchUpload. */
const ABORT_ATTEMPTS = 5;

/** True when S3 says the multipart upload does not exist (any more). */
function isNoSuchUpload(err: unknown): boolean {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e?.name === "NoSuchUpload" || e?.$metadata?.httpStatusCode === 404;
}

/** Where and how to upload. */
export interface UploadTarget {
  client: S3Client;
  bucket: string;
  key: string;
  contentType: string;
  /** POST: send `If-None-Match: *` so S3 refuses to replace an object created meanwhile. */
  ifNoneMatch: boolean;
  signal: AbortSignal;
  /** Declared body length, when known (chooses the part size). */
  length: number | null;
  /** Override of the part size (tests). */
  partBytes?: number;
}

/** What was uploaded. */
export interface UploadResult {
  size: number;
  sha256: string;
  multipart: boolean;
}

/** The part size for a body of `length` bytes (parts must number at most 10 000). */
export function partSizeFor(length: number | null, preferred = DEFAULT_PART_BYTES): number {
  const needed = length === null ? 0 : Math.ceil(length / MAX_PARTS);
  return Math.max(MIN_PART_BYTES, preferred, needed);
}

/**
 * At most `limit` part buffers, reused: a buffer comes back once its part is uploaded, so a long
 * upload allocates a few buffers in all instead of one per part (garbage the collector would
 * lag behind on).
 */
class BufferPool {
  readonly #size: number;
  readonly #limit: number;
  readonly #free: Uint8Array[] = [];
  readonly #waiting: ((buffer: Uint8Array) => void)[] = [];
  #allocated = 0;

  constructor(size: number, limit: number) {
    this.#size = size;
    this.#limit = limit;
  }

  /** A free buffer; waits for one to be given back when all are in use. */
  take(): Promise<Uint8Array> {
    const free = this.#free.pop();
    if (free) return Promise.resolve(free);
    if (this.#allocated < this.#limit) {
      this.#allocated++;
      return Promise.resolve(new Uint8Array(this.#size));
    }
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  /** Give a buffer back. */
  give(buffer: Uint8Array): void {
    const waiter = this.#waiting.shift();
    if (waiter) waiter(buffer);
    else this.#free.push(buffer);
  }
}

/** Upload `source` to `target.key`; rejects (with nothing left behind) on any failure. */
export async function uploadObject(
  source: WriteSource,
  target: UploadTarget,
): Promise<UploadResult> {
  const partBytes = target.partBytes ?? partSizeFor(target.length);
  const digest = new Digest();
  const chunks = chunksOf(source, digest, target.signal);
  // Parts uploading, plus the one being filled.
  const pool = new BufferPool(partBytes, PARTS_IN_FLIGHT + 1);
  let multipart: MultipartUpload | undefined;
  try {
    let buffer = await pool.take();
    let used = 0;
    for await (const chunk of chunks) {
      let offset = 0;
      while (offset < chunk.byteLength) {
        const n = Math.min(partBytes - used, chunk.byteLength - offset);
        buffer.set(chunk.subarray(offset, offset + n), used);
        used += n;
        offset += n;
        if (used === partBytes) {
          multipart ??= await MultipartUpload.start(target);
          const full = buffer;
          await multipart.send(full, used, () => pool.give(full));
          buffer = await pool.take();
          used = 0;
        }
      }
    }
    if (multipart) {
      if (used > 0) await multipart.send(buffer, used, () => {});
      await multipart.complete();
      return { size: digest.size, sha256: digest.hex(), multipart: true };
    }
    // The body ended within the first part: one PutObject, with the digest as metadata.
    const sha256 = digest.hex();
    await target.client.send(
      new PutObjectCommand({
        Bucket: target.bucket,
        Key: target.key,
        Body: buffer.subarray(0, used),
        ContentLength: used,
        ContentType: target.contentType,
        Metadata: { sha256 },
        ...(target.ifNoneMatch ? { IfNoneMatch: "*" } : {}),
      }),
      { abortSignal: target.signal },
    );
    return { size: digest.size, sha256, multipart: false };
  } catch (err) {
    await chunks.return(undefined).catch(() => {});
    await multipart?.abort();
    throw err;
  }
}

/** One multipart upload: parts sent with a bounded number in flight, then completed or aborted. */
class MultipartUpload {
  readonly #target: UploadTarget;
  readonly #uploadId: string;
  readonly #parts: CompletedPart[] = [];
  readonly #inFlight = new Set<Promise<void>>();
  #failure: unknown;
  #next = 1;

  private constructor(target: UploadTarget, uploadId: string) {
    this.#target = target;
    this.#uploadId = uploadId;
  }

  /** CreateMultipartUpload. */
  static async start(target: UploadTarget): Promise<MultipartUpload> {
    const created = await target.client.send(
      new CreateMultipartUploadCommand({
        Bucket: target.bucket,
        Key: target.key,
        ContentType: target.contentType,
      }),
      { abortSignal: target.signal },
    );
    return new MultipartUpload(target, created.UploadId!);
  }

  /** Start uploading `buffer[0..length)` once a slot is free; `done` runs when it settled. */
  async send(buffer: Uint8Array, length: number, done: () => void): Promise<void> {
    while (this.#inFlight.size >= PARTS_IN_FLIGHT) await Promise.race(this.#inFlight);
    if (this.#failure) throw this.#failure;
    const number = this.#next++;
    if (number > MAX_PARTS) throw new Error(`the body needs more than ${MAX_PARTS} parts`);
    const { client, bucket, key, signal } = this.#target;
    const task = client.send(
      new UploadPartCommand({
        Bucket: bucket,
        Key: key,
        UploadId: this.#uploadId,
        PartNumber: number,
        Body: buffer.subarray(0, length),
        ContentLength: length,
      }),
      { abortSignal: signal },
    ).then((res) => {
      this.#parts.push({ PartNumber: number, ETag: res.ETag });
    }, (err) => {
      this.#failure ??= err;
    }).finally(() => {
      this.#inFlight.delete(task);
      done();
    });
    this.#inFlight.add(task);
  }

  /** Wait for the parts, then CompleteMultipartUpload (with `If-None-Match: *` for POST). */
  async complete(): Promise<void> {
    await Promise.all(this.#inFlight);
    if (this.#failure) throw this.#failure;
    const { client, bucket, key, signal } = this.#target;
    this.#parts.sort((a, b) => a.PartNumber! - b.PartNumber!);
    await client.send(
      new CompleteMultipartUploadCommand({
        Bucket: bucket,
        Key: key,
        UploadId: this.#uploadId,
        MultipartUpload: { Parts: this.#parts },
        ...(this.#target.ifNoneMatch ? { IfNoneMatch: "*" } : {}),
      }),
      { abortSignal: signal },
    );
  }

  /**
   * Let the parts in flight settle, then AbortMultipartUpload until ListParts says the upload is
   * gone. A part whose upload this side gave up on (the client left, the call was aborted) may
   * still be arriving at the server and land after the first abort; S3 documents that an abort
   * may then have to be repeated to free every part. Bounded: ABORT_ATTEMPTS calls of at most
   * 10 s each, about 4 s of waits between them.
   */
  async abort(): Promise<void> {
    await Promise.allSettled(this.#inFlight);
    const { client, bucket, key } = this.#target;
    const ids = { Bucket: bucket, Key: key, UploadId: this.#uploadId };
    for (let attempt = 0; attempt < ABORT_ATTEMPTS; attempt++) {
      if (attempt > 0) await new Promise((r) => setTimeout(r, 250 * 2 ** (attempt - 1)));
      // The call's own signal may be what failed: each call gets a fresh, bounded one.
      await client.send(new AbortMultipartUploadCommand(ids), {
        abortSignal: AbortSignal.timeout(10_000),
      }).catch(() => {});
      const gone = await client.send(new ListPartsCommand(ids), {
        abortSignal: AbortSignal.timeout(10_000),
      }).then(() => false, (err) => isNoSuchUpload(err));
      if (gone) return;
    }
  }
}
