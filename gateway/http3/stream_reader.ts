/**
 * Buffered reading of HTTP/3 frames from one QUIC receive stream: varints, frame headers, whole
 * payloads (copied only when they span chunks) and DATA payloads passed on chunk by chunk.
 */
import { connectionError, H3 } from "./errors.ts";
import { type FrameHeader, parseFrameHeader } from "./frames.ts";
import { readVarint } from "./varint.ts";

/** The peer reset the stream, or the connection went away while reading it. */
export class StreamAbortedError extends Error {
  constructor(cause: unknown) {
    super(`stream aborted: ${(cause as Error)?.message ?? String(cause)}`, { cause });
    this.name = "StreamAbortedError";
  }
}

const EMPTY = new Uint8Array(0);

/** Reads frames from a byte stream. */
export class FrameStreamReader {
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>;
  #buf: Uint8Array = EMPTY;
  #pos = 0;
  #eof = false;
  #released = false;

  constructor(stream: ReadableStream<Uint8Array>) {
    this.#reader = stream.getReader();
  }

  /** Bytes buffered and not yet consumed. */
  get buffered(): number {
    return this.#buf.length - this.#pos;
  }

  /** True once the peer finished the stream and every byte was consumed. */
  get ended(): boolean {
    return this.#eof && this.buffered === 0;
  }

  /** Read one more chunk into the buffer; false at the end of the stream. */
  async #more(): Promise<boolean> {
    if (this.#eof) return false;
    if (this.#released) throw new StreamAbortedError(new Error("cancelled locally"));
    let r: ReadableStreamReadResult<Uint8Array>;
    try {
      r = await this.#reader.read();
    } catch (err) {
      throw new StreamAbortedError(err);
    }
    if (this.#released) throw new StreamAbortedError(new Error("cancelled locally"));
    if (r.done) {
      this.#eof = true;
      return false;
    }
    const chunk = r.value;
    if (this.buffered === 0) {
      this.#buf = chunk;
    } else {
      const merged = new Uint8Array(this.buffered + chunk.length);
      merged.set(this.#buf.subarray(this.#pos));
      merged.set(chunk, this.buffered);
      this.#buf = merged;
    }
    this.#pos = 0;
    return true;
  }

  /** Read a varint; null when the stream ends cleanly before it. */
  async varint(): Promise<number | null> {
    while (true) {
      const v = readVarint(this.#buf, this.#pos);
      if (v) {
        this.#pos += v.length;
        return v.value;
      }
      if (!(await this.#more())) {
        if (this.buffered === 0) return null;
        throw connectionError(H3.FRAME_ERROR, "stream ended inside a varint");
      }
    }
  }

  /** Read a frame header; null at a clean end of stream, H3_FRAME_ERROR when it ends inside. */
  async frameHeader(): Promise<FrameHeader | null> {
    while (true) {
      const h = parseFrameHeader(this.#buf, this.#pos);
      if (h) {
        this.#pos += h.headerLength;
        return h;
      }
      if (!(await this.#more())) {
        if (this.buffered === 0) return null;
        throw connectionError(H3.FRAME_ERROR, "stream ended inside a frame header");
      }
    }
  }

  /** Read exactly `length` bytes (a frame payload); H3_FRAME_ERROR when the stream ends first. */
  async payload(length: number): Promise<Uint8Array> {
    while (this.buffered < length) {
      if (!(await this.#more())) {
        throw connectionError(H3.FRAME_ERROR, "stream ended inside a frame payload");
      }
    }
    const out = this.#buf.subarray(this.#pos, this.#pos + length);
    this.#pos += length;
    return out;
  }

  /**
   * Up to `max` bytes of a payload, without copying: what is buffered, or the next chunk.
   * H3_FRAME_ERROR when the stream ends first.
   */
  async some(max: number): Promise<Uint8Array> {
    if (this.buffered === 0 && !(await this.#more())) {
      throw connectionError(H3.FRAME_ERROR, "stream ended inside a DATA frame");
    }
    const n = Math.min(max, this.buffered);
    const out = this.#buf.subarray(this.#pos, this.#pos + n);
    this.#pos += n;
    return out;
  }

  /** What is buffered, or the next chunk; null at the end of the stream. */
  async next(): Promise<Uint8Array | null> {
    if (this.buffered === 0 && !(await this.#more())) return null;
    const out = this.#buf.subarray(this.#pos);
    this.#pos = this.#buf.length;
    return out;
  }

  /** Discard `length` bytes of a payload. */
  async skip(length: number): Promise<void> {
    let left = length;
    while (left > 0) left -= (await this.some(left)).length;
  }

  /** Stop reading: asks the peer to stop sending (STOP_SENDING) unless the stream ended. */
  cancel(reason?: unknown): void {
    if (this.#released) return;
    this.#released = true;
    this.#reader.cancel(reason).catch(() => {});
  }
}
