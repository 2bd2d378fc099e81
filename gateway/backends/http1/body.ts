/** Response body decoders: content-length, chunked and read-until-close. */

import { Http1Error } from "./errors.ts";

/** The connection's read buffer: bytes `buf[start, end)` are received and not yet consumed. */
export interface ReadBuffer {
  buf: Uint8Array<ArrayBuffer>;
  start: number;
  end: number;
}

/** Takes body bytes out of a read buffer, one framing each. */
export interface BodyDecoder {
  /** True once the whole body was taken. */
  readonly done: boolean;
  /** False when the connection cannot carry another response after this body. */
  readonly reusable: boolean;
  /** Consumes the buffered body bytes and returns a copy of them, or null when none are buffered. */
  take(input: ReadBuffer): Uint8Array<ArrayBuffer> | null;
  /** The peer closed the connection: ends a read-until-close body, throws for framed ones. */
  eof(): void;
}

/** A body of known length. */
export class LengthDecoder implements BodyDecoder {
  readonly reusable = true;
  done: boolean;
  #remaining: number;
  readonly #length: number;

  constructor(length: number) {
    this.#length = length;
    this.#remaining = length;
    this.done = length === 0;
  }

  take(input: ReadBuffer): Uint8Array<ArrayBuffer> | null {
    const n = Math.min(input.end - input.start, this.#remaining);
    if (n <= 0) return null;
    const out = input.buf.slice(input.start, input.start + n);
    input.start += n;
    this.#remaining -= n;
    if (this.#remaining === 0) this.done = true;
    return out;
  }

  eof(): void {
    throw new Http1Error(
      `response body truncated: the connection closed after ${
        this.#length - this.#remaining
      } of ${this.#length} bytes`,
      "protocol",
    );
  }
}

/** A body that ends when the server closes the connection (neither length nor chunked). */
export class CloseDecoder implements BodyDecoder {
  readonly reusable = false;
  done = false;

  take(input: ReadBuffer): Uint8Array<ArrayBuffer> | null {
    if (input.end === input.start) return null;
    const out = input.buf.slice(input.start, input.end);
    input.start = input.end;
    return out;
  }

  eof(): void {
    this.done = true;
  }
}

const enum State {
  Size,
  Data,
  DataEnd,
  Trailer,
  Done,
}

/** Longest chunk-size line (with extensions) we accept. */
const MAX_SIZE_LINE = 4096;
const LF = 10;
const CR = 13;

/** A `transfer-encoding: chunked` body; extensions and trailers are read and ignored. */
export class ChunkedDecoder implements BodyDecoder {
  readonly reusable = true;
  #state = State.Size;
  #remaining = 0;
  #trailerBytes = 0;
  readonly #maxTrailerBytes: number;
  // Offsets and lengths of the data pieces found by one take(), joined into one chunk.
  readonly #pieces: number[] = [];

  constructor(maxTrailerBytes: number) {
    this.#maxTrailerBytes = maxTrailerBytes;
  }

  get done(): boolean {
    return this.#state === State.Done;
  }

  take(input: ReadBuffer): Uint8Array<ArrayBuffer> | null {
    const buf = input.buf;
    const pieces = this.#pieces;
    pieces.length = 0;
    let total = 0;
    let pos = input.start;
    const end = input.end;
    loop: while (pos < end) {
      switch (this.#state) {
        case State.Size: {
          const lf = lineEnd(buf, pos, end, MAX_SIZE_LINE, "chunk size line");
          if (lf === -1) break loop;
          const size = parseChunkSize(buf, pos, lf);
          pos = lf + 1;
          if (size === 0) this.#state = State.Trailer;
          else {
            this.#remaining = size;
            this.#state = State.Data;
          }
          break;
        }
        case State.Data: {
          const n = Math.min(end - pos, this.#remaining);
          pieces.push(pos, n);
          total += n;
          pos += n;
          this.#remaining -= n;
          if (this.#remaining === 0) this.#state = State.DataEnd;
          break;
        }
        case State.DataEnd: {
          if (buf[pos] === LF) pos += 1;
          else if (buf[pos] === CR) {
            if (pos + 1 === end) break loop;
            if (buf[pos + 1] !== LF) throw chunkError("missing CRLF after chunk data");
            pos += 2;
          } else throw chunkError("missing CRLF after chunk data");
          this.#state = State.Size;
          break;
        }
        case State.Trailer: {
          const room = this.#maxTrailerBytes - this.#trailerBytes;
          const lf = lineEnd(buf, pos, end, room, "trailer section");
          if (lf === -1) break loop;
          const blank = lf === pos || (lf === pos + 1 && buf[pos] === CR);
          this.#trailerBytes += lf + 1 - pos;
          pos = lf + 1;
          if (blank) this.#state = State.Done;
          break;
        }
        case State.Done:
          break loop;
      }
    }
    input.start = pos;
    if (total === 0) return null;
    if (pieces.length === 2) return buf.slice(pieces[0], pieces[0] + total);
    const out = new Uint8Array(total);
    let offset = 0;
    for (let i = 0; i < pieces.length; i += 2) {
      out.set(buf.subarray(pieces[i], pieces[i] + pieces[i + 1]), offset);
      offset += pieces[i + 1];
    }
    return out;
  }

  eof(): void {
    throw chunkError("the connection closed before the last chunk");
  }
}

function chunkError(message: string): Http1Error {
  return new Http1Error(`invalid chunked response body: ${message}`, "protocol");
}

/** Index of the LF ending the line at `pos`, or -1 when it is not buffered yet (within `max`). */
function lineEnd(buf: Uint8Array, pos: number, end: number, max: number, what: string): number {
  const lf = buf.indexOf(LF, pos);
  if (lf !== -1 && lf < end) {
    if (lf - pos >= max) throw chunkError(`${what} too long`);
    return lf;
  }
  if (end - pos >= max) throw chunkError(`${what} too long`);
  return -1;
}

/** Parses `1a;ext=1\r` in `buf[pos, lf)`: hex digits, optional whitespace and extensions. */
function parseChunkSize(buf: Uint8Array, pos: number, lf: number): number {
  let size = 0;
  let digits = 0;
  let i = pos;
  for (; i < lf; i++) {
    const c = buf[i];
    let value: number;
    if (c >= 48 && c <= 57) value = c - 48;
    else if (c >= 97 && c <= 102) value = c - 87;
    else if (c >= 65 && c <= 70) value = c - 55;
    else break;
    // 13 hex digits stay below 2^53.
    if (++digits > 13) throw chunkError("chunk size too large");
    size = size * 16 + value;
  }
  if (digits === 0) throw chunkError("chunk size is not a hex number");
  while (i < lf && (buf[i] === 32 || buf[i] === 9)) i++;
  if (i < lf && buf[i] !== 59 && !(buf[i] === CR && i === lf - 1)) {
    throw chunkError("chunk size is not a hex number");
  }
  return size;
}
