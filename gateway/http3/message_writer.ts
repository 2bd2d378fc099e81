/** Writing one HTTP message on a request stream: a HEADERS frame, then DATA frames. */
import { encodeFrame, FRAME, frameHeader } from "./frames.ts";
import { encodeFieldSection } from "./qpack_encoder.ts";

/** Above this size a chunk is written after its frame header instead of being copied behind it. */
const COPY_LIMIT = 64 * 1024;

/** The response or request body being sent failed (not the stream it was written to). */
export class BodySourceError extends Error {
  constructor(cause: unknown) {
    super(`body failed: ${(cause as Error)?.message ?? String(cause)}`, { cause });
    this.name = "BodySourceError";
  }
}

/**
 * Deno's QUIC streams cannot be reset with an error code (abort only finishes them), so an
 * abandoned message is marked malformed instead: a trailer section holding a pseudo-header is a
 * stream error of type H3_MESSAGE_ERROR at the receiver (RFC 9114 §4.1.2), which therefore never
 * takes the truncated body for a complete one.
 */
export function abandonedMarker(): Uint8Array {
  return headersFrame([[":abandoned", "1"]]);
}

/** A HEADERS frame for the field lines. */
export function headersFrame(fields: Iterable<readonly [string, string]>): Uint8Array {
  return encodeFrame(FRAME.HEADERS, encodeFieldSection(fields));
}

/** Write one chunk of body as a DATA frame. */
export async function writeData(
  writer: WritableStreamDefaultWriter<Uint8Array>,
  chunk: Uint8Array,
): Promise<void> {
  if (chunk.length === 0) return;
  // One write per frame: an abort between writes would otherwise leave a truncated frame.
  if (chunk.length > COPY_LIMIT) {
    const head = frameHeader(FRAME.DATA, chunk.length);
    const frame = new Uint8Array(head.length + chunk.length);
    frame.set(head);
    frame.set(chunk, head.length);
    await writer.write(frame);
    return;
  }
  await writer.write(encodeFrame(FRAME.DATA, chunk));
}

/**
 * Write a body (bytes or a stream) as DATA frames. Resolves with the number of body bytes sent;
 * rejects when the body stream fails or the peer stops reading.
 */
export async function writeBody(
  writer: WritableStreamDefaultWriter<Uint8Array>,
  body: Uint8Array | ReadableStream<Uint8Array> | null,
): Promise<number> {
  if (body === null) return 0;
  if (body instanceof Uint8Array) {
    await writeData(writer, body);
    return body.length;
  }
  let sent = 0;
  const reader = body.getReader();
  try {
    while (true) {
      let r: ReadableStreamReadResult<Uint8Array>;
      try {
        r = await reader.read();
      } catch (err) {
        throw new BodySourceError(err);
      }
      if (r.done) break;
      await writeData(writer, r.value);
      sent += r.value.length;
    }
  } catch (err) {
    reader.cancel(err).catch(() => {});
    throw err;
  } finally {
    reader.releaseLock();
  }
  return sent;
}
