/**
 * Reading a body stream within its limits: the size (413) and the time it may take (408). Used by
 * the envelope's bodies and by spooling.
 *
 * @module
 */
import { GatewayError } from "./errors.ts";

/** The 408 of a request body that did not arrive in time. */
export function bodyTimeout(ms: number): GatewayError {
  return new GatewayError(
    408,
    "request_body_timeout",
    `the request body did not arrive within body_timeout_secs (${ms / 1000} s)`,
  );
}

/**
 * Reads `stream` chunk by chunk into `onChunk`, failing with 413 (`overLimit`) as soon as it
 * passes `limit` bytes and with 408 when it takes longer than `deadlineMs`. Returns the total.
 */
export async function readChunks(
  stream: ReadableStream<Uint8Array>,
  limit: number,
  onChunk: (chunk: Uint8Array, total: number) => void | Promise<void>,
  overLimit: (limit: number) => GatewayError,
  deadlineMs?: number,
): Promise<number> {
  let total = 0;
  const reader = stream.getReader();
  let timedOut = false;
  const timer = deadlineMs === undefined ? undefined : setTimeout(() => {
    timedOut = true;
    reader.cancel().catch(() => {});
  }, deadlineMs);
  try {
    while (true) {
      const { done, value } = await reader.read().catch((err) => {
        throw timedOut ? bodyTimeout(deadlineMs!) : err;
      });
      if (timedOut) throw bodyTimeout(deadlineMs!);
      if (done) break;
      total += value.byteLength;
      if (total > limit) {
        await reader.cancel().catch(() => {});
        throw overLimit(limit);
      }
      await onChunk(value, total);
    }
  } catch (err) {
    await reader.cancel().catch(() => {});
    throw err;
  } finally {
    clearTimeout(timer);
    reader.releaseLock();
  }
  return total;
}

/** Concatenates chunks of `total` bytes (the one chunk itself when there is only one). */
export function concatChunks(chunks: Uint8Array[], total: number): Uint8Array {
  if (chunks.length === 1) return chunks[0];
  const out = new Uint8Array(total);
  let offset = 0;
  for (const c of chunks) {
    out.set(c, offset);
    offset += c.byteLength;
  }
  return out;
}
