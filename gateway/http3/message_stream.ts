/**
 * Reading one HTTP message from a request stream (RFC 9114 §4.1): HEADERS, DATA*, optional
 * trailing HEADERS, with unknown frames skipped and out-of-place frames refused.
 */
import { connectionError, H3, streamError } from "./errors.ts";
import { FRAME, HTTP2_ONLY_FRAMES } from "./frames.ts";
import { parseTrailers } from "./message.ts";
import type { FieldLine, QpackDecoder } from "./qpack_decoder.ts";
import type { FrameStreamReader } from "./stream_reader.ts";

/** What a message reader needs to know about its stream. */
export interface MessageContext {
  decoder: QpackDecoder;
  streamId: number;
  /** Which side reads: the server reads requests, the client responses. */
  role: "client" | "server";
  /** Largest HEADERS payload accepted (H3_EXCESSIVE_LOAD beyond it). */
  maxHeaderFrame: number;
}

/** Refuse frame types that may not appear on a request stream (§7.2). */
export function checkRequestStreamFrame(type: number, role: "client" | "server"): void {
  switch (type) {
    case FRAME.CANCEL_PUSH:
    case FRAME.SETTINGS:
    case FRAME.GOAWAY:
    case FRAME.MAX_PUSH_ID:
      throw connectionError(
        H3.FRAME_UNEXPECTED,
        `frame 0x${type.toString(16)} on a request stream`,
      );
    case FRAME.PUSH_PROMISE:
      // A client never allowed pushes (no MAX_PUSH_ID); a server never receives PUSH_PROMISE.
      if (role === "client") throw connectionError(H3.ID_ERROR, "PUSH_PROMISE without MAX_PUSH_ID");
      throw connectionError(H3.FRAME_UNEXPECTED, "PUSH_PROMISE from a client");
  }
  if (HTTP2_ONLY_FRAMES.has(type)) {
    throw connectionError(H3.FRAME_UNEXPECTED, `HTTP/2 frame type 0x${type.toString(16)}`);
  }
}

async function headersPayload(
  reader: FrameStreamReader,
  length: number,
  ctx: MessageContext,
): Promise<FieldLine[]> {
  if (length > ctx.maxHeaderFrame) {
    throw streamError(H3.EXCESSIVE_LOAD, `HEADERS frame of ${length} bytes is too large`);
  }
  const payload = await reader.payload(length);
  return ctx.decoder.decodeSection(ctx.streamId, payload);
}

/** Read up to the next HEADERS frame and decode it; null when the stream ends first. */
export async function readHeaderSection(
  reader: FrameStreamReader,
  ctx: MessageContext,
): Promise<FieldLine[] | null> {
  while (true) {
    const h = await reader.frameHeader();
    if (!h) return null;
    if (h.type === FRAME.HEADERS) return await headersPayload(reader, h.length, ctx);
    if (h.type === FRAME.DATA) throw connectionError(H3.FRAME_UNEXPECTED, "DATA before HEADERS");
    checkRequestStreamFrame(h.type, ctx.role);
    await reader.skip(h.length);
  }
}

/** Options of a message body stream. */
export interface BodyOptions {
  /** Declared Content-Length: a body of another length is malformed (H3_MESSAGE_ERROR). */
  expectedLength: number | null;
  /** Called with any error that ends the body (to close the stream or connection). */
  onError(err: unknown): void;
  /** Called once the body ended cleanly. */
  onEnd?(): void;
  /** Receives the trailer section, if any. */
  onTrailers?(trailers: Headers): void;
}

/** The DATA payloads of a message as a byte stream, then trailers; the reader is consumed. */
export function bodyStream(
  reader: FrameStreamReader,
  ctx: MessageContext,
  opts: BodyOptions,
): ReadableStream<Uint8Array> {
  let remaining = 0;
  let received = 0;
  let trailersSeen = false;
  const fail = (controller: ReadableStreamDefaultController<Uint8Array>, err: unknown) => {
    opts.onError(err);
    controller.error(err);
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        while (true) {
          if (remaining > 0) {
            const chunk = await reader.some(remaining);
            remaining -= chunk.length;
            received += chunk.length;
            if (opts.expectedLength !== null && received > opts.expectedLength) {
              throw streamError(H3.MESSAGE_ERROR, "body longer than its content-length");
            }
            controller.enqueue(chunk);
            return;
          }
          const h = await reader.frameHeader();
          if (!h) {
            if (opts.expectedLength !== null && received !== opts.expectedLength) {
              throw streamError(H3.MESSAGE_ERROR, "body shorter than its content-length");
            }
            controller.close();
            opts.onEnd?.();
            return;
          }
          if (h.type === FRAME.DATA) {
            if (trailersSeen) throw connectionError(H3.FRAME_UNEXPECTED, "DATA after trailers");
            remaining = h.length;
          } else if (h.type === FRAME.HEADERS) {
            if (trailersSeen) throw connectionError(H3.FRAME_UNEXPECTED, "HEADERS after trailers");
            trailersSeen = true;
            const trailers = parseTrailers(await headersPayload(reader, h.length, ctx));
            opts.onTrailers?.(trailers);
          } else {
            checkRequestStreamFrame(h.type, ctx.role);
            await reader.skip(h.length);
          }
        }
      } catch (err) {
        fail(controller, err);
      }
    },
    cancel(reason) {
      reader.cancel(reason);
    },
  }, { highWaterMark: 0 });
}
