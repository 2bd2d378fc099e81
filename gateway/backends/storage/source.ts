/**
 * Reading a write body chunk by chunk while hashing and counting it, stopping at once when the
 * call is aborted (client gone, timeout) or the body fails (413 over the limit, a broken
 * connection). Chunks are handed on as they arrive: nothing is buffered here.
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
  const reader = source.getReader();
  const onAbort = () => reader.cancel(signal.reason).catch(() => {});
  signal.addEventListener("abort", onAbort, { once: true });
  let finished = false;
  try {
    while (true) {
      let result: ReadableStreamReadResult<Uint8Array>;
      try {
        result = await reader.read();
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
