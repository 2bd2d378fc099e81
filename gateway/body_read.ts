/**
 * Reading a body stream within its limits: the size (413) and the time it may take (408). Used by
 * the envelope's bodies and by spooling.
 *
 * @module
 */
import { clientBodyBroke, clientClosed, GatewayError } from "./errors.ts";

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
 * passes `limit` bytes, with 408 when it takes longer than `deadlineMs`, and with 499 when the
 * client's body broke off. Returns the total.
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
        throw timedOut ? bodyTimeout(deadlineMs!) : clientBodyBroke(err) ?? err;
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

/**
 * A client's body `stream` bounded by `body_timeout_secs`, for a reader that takes it whole
 * (a delivery queue writing it to disk): it fails with the 408 when it has not ended within
 * `deadlineMs`, and with 499 `client_closed` when the client's body broke off. Pull-based: it
 * reads nothing ahead.
 */
export function boundedClientBody(
  stream: ReadableStream<Uint8Array>,
  deadlineMs: number,
): ReadableStream<Uint8Array> {
  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let timedOut = false;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      timer = setTimeout(() => {
        timedOut = true;
        controller.error(bodyTimeout(deadlineMs));
        (reader ?? stream).cancel().catch(() => {});
      }, deadlineMs);
    },
    async pull(controller) {
      reader ??= stream.getReader();
      try {
        const { done, value } = await reader.read();
        if (timedOut) return;
        if (done) {
          clearTimeout(timer);
          controller.close();
        } else controller.enqueue(value);
      } catch (err) {
        clearTimeout(timer);
        if (!timedOut) controller.error(clientBodyBroke(err) ?? err);
      }
    },
    cancel(reason) {
      clearTimeout(timer);
      return (reader ?? stream).cancel(reason);
    },
  }, { highWaterMark: 0 });
}

/**
 * A client's HTTP/2 body that fails with 499 `client_closed` where the client reset its stream:
 * the runtime (Deno 2.9) ends such a body as if it were whole. Fewer bytes than `declared` tell,
 * or, without a declared length, the request's `signal`, read before the reset (the runtime
 * aborts it only when it watched the request at that moment). Pull-based: it reads nothing ahead.
 */
export function resetAwareBody(
  stream: ReadableStream<Uint8Array>,
  declared: number | null,
  signal: AbortSignal | undefined,
): ReadableStream<Uint8Array> {
  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  let total = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      reader ??= stream.getReader();
      const { done, value } = await reader.read();
      if (!done) {
        total += value.byteLength;
        return controller.enqueue(value);
      }
      // The reset aborts the signal in a task of its own, which may come after the body's end:
      // a body of unknown length waits one turn of the event loop for it before it counts as
      // whole (HTTP/2 uploads without a length only).
      if (declared === null && signal && !signal.aborted) await nextTurn();
      if ((declared !== null && total < declared) || signal?.aborted) {
        controller.error(clientClosed());
      } else controller.close();
    },
    cancel: (reason) => (reader ?? stream).cancel(reason),
  }, { highWaterMark: 0 });
}

/** Resolves after the tasks already queued (a timer of 0 ms: one turn of the event loop). */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
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
