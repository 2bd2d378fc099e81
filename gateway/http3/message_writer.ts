/** Writing one HTTP message on a request stream: a HEADERS frame, then DATA frames. */
import { encodeFrame, FRAME, frameHeader } from "./frames.ts";
import { encodeFieldSection } from "./qpack_encoder.ts";

/** Above this size a chunk is written after its frame header instead of being copied behind it. */
const COPY_LIMIT = 64 * 1024;

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
  if (chunk.length > COPY_LIMIT) {
    await writer.write(frameHeader(FRAME.DATA, chunk.length));
    await writer.write(chunk);
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
      const { done, value } = await reader.read();
      if (done) break;
      await writeData(writer, value);
      sent += value.length;
    }
  } catch (err) {
    reader.cancel(err).catch(() => {});
    throw err;
  } finally {
    reader.releaseLock();
  }
  return sent;
}
