/** Writing a request (head and body) to a connection. */

import type { Connection } from "./connection.ts";
import { Http1Error } from "./errors.ts";
import { joinHead, type RequestHead } from "./head.ts";

/** A request body as the client accepts it. */
export type RequestBody = ReadableStream<Uint8Array> | Uint8Array | null;

/** The caller's body stream failed or had the wrong length: reported as is, never retried. */
export class SourceError {
  constructor(readonly error: unknown) {}
}

/** Bodies up to this size are copied behind the head so the request goes out in one write. */
const SMALL_BODY_BYTES = 64 * 1024;
/** Bytes read per chunk from a byte stream (BYOB). */
const UPLOAD_CHUNK_BYTES = 64 * 1024;
/** Room before a BYOB chunk for its `<hex size>\r\n` prefix. */
const PREFIX_ROOM = 10;
const LAST_CHUNK = new TextEncoder().encode("0\r\n\r\n");

/** Writes `head` and `body` as `head.framing` says; source stream failures throw {@link SourceError}. */
export async function writeRequest(
  conn: Connection,
  head: RequestHead,
  body: RequestBody,
): Promise<void> {
  const bytes = head.bytes;
  if (body === null) return conn.write(bytes);
  if (body instanceof Uint8Array) {
    if (body.byteLength <= SMALL_BODY_BYTES) {
      return conn.write(
        joinHead(bytes, body, conn.writeBuffer(bytes.byteLength + body.byteLength)),
      );
    }
    await conn.write(bytes);
    return conn.write(body);
  }
  if (head.framing === "length" && head.length <= SMALL_BODY_BYTES) {
    // A small declared body (most API calls): read it whole, send head and body in one write.
    // Sizing reads to the body also keeps a 64 KiB buffer (an mmap/munmap pair under the
    // gateway's malloc settings) off every small request.
    const content = await readExactly(body, head.length);
    return conn.write(
      joinHead(bytes, content, conn.writeBuffer(bytes.byteLength + content.byteLength)),
    );
  }
  await conn.write(bytes);
  await writeStream(conn, head, body);
}

/** Reads a stream that must hold exactly `length` bytes (the declared content-length). */
async function readExactly(body: ReadableStream<Uint8Array>, length: number): Promise<Uint8Array> {
  const out = new Uint8Array(length);
  let filled = 0;
  const reader = body.getReader();
  try {
    while (true) {
      let result: ReadableStreamReadResult<Uint8Array>;
      try {
        result = await reader.read();
      } catch (error) {
        throw new SourceError(error);
      }
      if (result.done) break;
      const chunk = result.value;
      if (filled + chunk.byteLength > length) {
        throw new SourceError(
          new Http1Error(
            `the request body is longer than its content-length ${length}`,
            "body_length",
          ),
        );
      }
      out.set(chunk, filled);
      filled += chunk.byteLength;
    }
  } catch (error) {
    reader.cancel(error instanceof SourceError ? error.error : error).catch(() => {});
    throw error;
  }
  if (filled !== length) {
    throw new SourceError(
      new Http1Error(
        `the request body ended after ${filled} of ${length} bytes (its content-length)`,
        "body_length",
      ),
    );
  }
  return out;
}

async function writeStream(
  conn: Connection,
  head: RequestHead,
  body: ReadableStream<Uint8Array>,
): Promise<void> {
  // A byte stream (such as Deno.serve's request body) is read straight into one buffer that
  // is reused for every chunk (BYOB), so the upload makes no garbage; others hand us chunks.
  let byob: ReadableStreamBYOBReader | null = null;
  let reader: ReadableStreamDefaultReader<Uint8Array> | null = null;
  try {
    byob = body.getReader({ mode: "byob" });
  } catch {
    reader = body.getReader();
  }
  let buffer = new ArrayBuffer(byob ? PREFIX_ROOM + UPLOAD_CHUNK_BYTES + 2 : 0);
  const next = async (): Promise<Uint8Array | null> => {
    try {
      if (byob) {
        const result = await byob.read(new Uint8Array(buffer, PREFIX_ROOM, UPLOAD_CHUNK_BYTES));
        // The read transferred our buffer: keep using the one it came back in.
        if (result.value) buffer = result.value.buffer as ArrayBuffer;
        return result.done ? null : result.value;
      }
      const result = await reader!.read();
      return result.done ? null : result.value;
    } catch (error) {
      throw new SourceError(error);
    }
  };
  const chunked = head.framing === "chunked";
  let sent = 0;
  try {
    for (let chunk = await next(); chunk !== null; chunk = await next()) {
      if (chunked) {
        if (chunk.byteLength === 0) continue;
        const inPlace = byob !== null && chunk.buffer === buffer &&
          chunk.byteOffset === PREFIX_ROOM;
        await conn.write(
          inPlace ? frameInPlace(buffer, chunk.byteLength) : frameChunk(chunk, conn),
        );
        continue;
      }
      sent += chunk.byteLength;
      if (sent > head.length) {
        throw new SourceError(
          new Http1Error(
            `the request body is longer than its content-length ${head.length}`,
            "body_length",
          ),
        );
      }
      await conn.write(chunk);
    }
    if (chunked) await conn.write(LAST_CHUNK);
    else if (sent !== head.length) {
      throw new SourceError(
        new Http1Error(
          `the request body ended after ${sent} of ${head.length} bytes (its content-length)`,
          "body_length",
        ),
      );
    }
  } catch (error) {
    (byob ?? reader)!.cancel(error instanceof SourceError ? error.error : error).catch(() => {});
    throw error;
  }
}

/** Frames `length` bytes read into `buffer` at PREFIX_ROOM, without copying them. */
function frameInPlace(buffer: ArrayBuffer, length: number): Uint8Array {
  const bytes = new Uint8Array(buffer);
  const size = length.toString(16);
  const start = PREFIX_ROOM - size.length - 2;
  for (let i = 0; i < size.length; i++) bytes[start + i] = size.charCodeAt(i);
  bytes[PREFIX_ROOM - 2] = 13;
  bytes[PREFIX_ROOM - 1] = 10;
  bytes[PREFIX_ROOM + length] = 13;
  bytes[PREFIX_ROOM + length + 1] = 10;
  return bytes.subarray(start, PREFIX_ROOM + length + 2);
}

/** `<hex size>\r\n<chunk>\r\n` in the connection's write buffer, so each chunk is one write. */
function frameChunk(chunk: Uint8Array, conn: Connection): Uint8Array {
  const size = chunk.byteLength.toString(16);
  const length = size.length + chunk.byteLength + 4;
  const out = conn.writeBuffer(length);
  for (let i = 0; i < size.length; i++) out[i] = size.charCodeAt(i);
  out[size.length] = 13;
  out[size.length + 1] = 10;
  out.set(chunk, size.length + 2);
  out[length - 2] = 13;
  out[length - 1] = 10;
  return out.subarray(0, length);
}
