/**
 * Reading a write body chunk by chunk while hashing and counting it, stopping at once when the
 * call is aborted (client gone, timeout) or the body fails (413 over the limit, a broken
 * connection). Chunks are handed on as they arrive: nothing is buffered here, and a chunk is
 * valid only until the consumer asks for the next one (its buffer is reused).
 */
import { createHash, type Hash } from "node:crypto";

/** Bytes seen so far and their running SHA-256. */
export class Digest {
  readonly #hash: Hash = createHash("sha256");
  size = 0;

  /** Account for one chunk. */
  update(chunk: Uint8Array): void {
    this.#hash.update(chunk);
    this.size += chunk.byteLength;
  }

  /** The hex digest (once, at the end). */
  hex(): string {
    return this.#hash.digest("hex");
  }
}

/** Size of the one buffer a byte stream is read into. */
const READ_BUFFER_BYTES = 256 * 1024;

/** A reader and a `read()` for it. */
interface OpenedReader {
  reader: ReadableStreamDefaultReader<Uint8Array> | ReadableStreamBYOBReader;
  read(): Promise<ReadableStreamReadResult<Uint8Array>>;
}

/**
 * A byte stream (a request body straight from the HTTP server) is read into one reused buffer,
 * so a large upload allocates nothing per chunk and leaves no garbage for the collector to lag
 * behind on; other streams are read chunk by chunk.
 */
function openReader(source: ReadableStream<Uint8Array>): OpenedReader {
  let byob: ReadableStreamBYOBReader;
  try {
    byob = source.getReader({ mode: "byob" });
  } catch {
    const reader = source.getReader();
    return { reader, read: () => reader.read() };
  }
  let buffer = new Uint8Array(READ_BUFFER_BYTES);
  return {
    reader: byob,
    read: async () => {
      const result = await byob.read(buffer);
      // The buffer was transferred into the view; the next read reuses all of it.
      if (result.value) buffer = new Uint8Array(result.value.buffer);
      return result as ReadableStreamReadResult<Uint8Array>;
    },
  };
}

/** Thrown when the signal aborted the read; the caller maps the reason. */
export class AbortedRead extends Error {
  constructor() {
    super("the call was aborted while the body was read");
    this.name = "AbortedRead";
  }
}

/** The body itself failed (connection lost, over the size limit): not the store's fault. */
export class SourceError extends Error {
  constructor(cause: unknown) {
    super(`the request body could not be read: ${(cause as Error)?.message ?? String(cause)}`, {
      cause,
    });
    this.name = "SourceError";
  }
}

/** True for the errors that come from the body or the call, not from the store. */
export function isSourceFailure(err: unknown): boolean {
  return err instanceof AbortedRead || err instanceof SourceError;
}

/**
 * The chunks of `source`, each counted into `digest`. The stream is cancelled when the signal
 * aborts or the consumer stops early; an aborted signal ends the iteration with AbortedRead,
 * never with a silent end of data.
 */
export async function* chunksOf(
  source: ReadableStream<Uint8Array> | Uint8Array | null,
  digest: Digest,
  signal: AbortSignal,
): AsyncGenerator<Uint8Array> {
  if (signal.aborted) throw new AbortedRead();
  if (source === null) return;
  if (source instanceof Uint8Array) {
    if (source.byteLength === 0) return;
    digest.update(source);
    yield source;
    return;
  }
  const { reader, read } = openReader(source);
  const onAbort = () => reader.cancel(signal.reason).catch(() => {});
  signal.addEventListener("abort", onAbort, { once: true });
  let finished = false;
  try {
    while (true) {
      let result: ReadableStreamReadResult<Uint8Array>;
      try {
        result = await read();
      } catch (err) {
        if (signal.aborted) throw new AbortedRead();
        throw new SourceError(err);
      }
      if (signal.aborted) throw new AbortedRead();
      const { done, value } = result;
      if (done) break;
      if (value.byteLength === 0) continue;
      digest.update(value);
      yield value;
    }
    finished = true;
  } finally {
    signal.removeEventListener("abort", onAbort);
    if (!finished) await reader.cancel().catch(() => {});
    reader.releaseLock();
  }
}
