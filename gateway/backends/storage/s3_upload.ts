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

/** Fills fixed-size part buffers from chunks of any size. */
class PartFiller {
  readonly #size: number;
  #buffer: Uint8Array;
  #used = 0;

  constructor(size: number) {
    this.#size = size;
    this.#buffer = new Uint8Array(size);
  }

  /** Add a chunk; returns the parts it completed. */
  add(chunk: Uint8Array): Uint8Array[] {
    const full: Uint8Array[] = [];
    let offset = 0;
    while (offset < chunk.byteLength) {
      const n = Math.min(this.#size - this.#used, chunk.byteLength - offset);
      this.#buffer.set(chunk.subarray(offset, offset + n), this.#used);
      this.#used += n;
      offset += n;
      if (this.#used === this.#size) {
        full.push(this.#buffer);
        this.#buffer = new Uint8Array(this.#size);
        this.#used = 0;
      }
    }
    return full;
  }

  /** The bytes not yet handed out as a full part. */
  rest(): Uint8Array {
    return this.#buffer.subarray(0, this.#used);
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
  const filler = new PartFiller(partBytes);
  let first: Uint8Array | undefined;
  // Fill the first part: a body that ends before it is a single PutObject.
  for await (const chunk of chunks) {
    const full = filler.add(chunk);
    if (full.length > 0) {
      first = full[0];
      const more = full.slice(1);
      return await multipart(target, chunks, filler, [first, ...more], digest);
    }
  }
  const body = filler.rest();
  const sha256 = digest.hex();
  await target.client.send(
    new PutObjectCommand({
      Bucket: target.bucket,
      Key: target.key,
      Body: body,
      ContentLength: body.byteLength,
      ContentType: target.contentType,
      Metadata: { sha256 },
      ...(target.ifNoneMatch ? { IfNoneMatch: "*" } : {}),
    }),
    { abortSignal: target.signal },
  );
  return { size: digest.size, sha256, multipart: false };
}

async function multipart(
  target: UploadTarget,
  chunks: AsyncGenerator<Uint8Array>,
  filler: PartFiller,
  ready: Uint8Array[],
  digest: Digest,
): Promise<UploadResult> {
  const { client, bucket, key, signal } = target;
  const created = await client.send(
    new CreateMultipartUploadCommand({ Bucket: bucket, Key: key, ContentType: target.contentType }),
    { abortSignal: signal },
  );
  const uploadId = created.UploadId!;
  const parts: CompletedPart[] = [];
  const inFlight = new Set<Promise<void>>();
  let failure: unknown;
  let partNumber = 0;
  const send = (body: Uint8Array) => {
    const number = ++partNumber;
    if (number > MAX_PARTS) throw new Error(`the body needs more than ${MAX_PARTS} parts`);
    const task = client.send(
      new UploadPartCommand({
        Bucket: bucket,
        Key: key,
        UploadId: uploadId,
        PartNumber: number,
        Body: body,
        ContentLength: body.byteLength,
      }),
      { abortSignal: signal },
    ).then((res) => {
      parts.push({ PartNumber: number, ETag: res.ETag });
    }, (err) => {
      failure ??= err;
    }).finally(() => inFlight.delete(task));
    inFlight.add(task);
  };
  const sendAll = async (bodies: Uint8Array[]) => {
    for (const body of bodies) {
      while (inFlight.size >= PARTS_IN_FLIGHT) await Promise.race(inFlight);
      if (failure) throw failure;
      send(body);
    }
  };
  try {
    await sendAll(ready);
    for await (const chunk of chunks) await sendAll(filler.add(chunk));
    const last = filler.rest();
    if (last.byteLength > 0) await sendAll([last]);
    await Promise.all(inFlight);
    if (failure) throw failure;
    parts.sort((a, b) => a.PartNumber! - b.PartNumber!);
    await client.send(
      new CompleteMultipartUploadCommand({
        Bucket: bucket,
        Key: key,
        UploadId: uploadId,
        MultipartUpload: { Parts: parts },
        ...(target.ifNoneMatch ? { IfNoneMatch: "*" } : {}),
      }),
      { abortSignal: signal },
    );
    return { size: digest.size, sha256: digest.hex(), multipart: true };
  } catch (err) {
    await chunks.return(undefined).catch(() => {});
    await Promise.allSettled(inFlight);
    await client.send(
      new AbortMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: uploadId }),
      // The call's own signal may be what failed: the abort gets a fresh, bounded one.
      { abortSignal: AbortSignal.timeout(30_000) },
    ).catch(() => {});
    throw err;
  }
}
