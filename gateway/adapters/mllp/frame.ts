/**
 * MLLP framing (HL7 v2 Minimal Lower Layer Protocol, release 2): every message travels as
 * `<VT>` (0x0B), the payload, `<FS>` (0x1C) and `<CR>` (0x0D). The reader splits a byte stream into
 * whole payloads in one pass over the bytes: each chunk is scanned once with native `indexOf`, and a
 * frame's pieces are joined once, when its end arrives.
 */

/** The start block, `<VT>`. */
export const MLLP_START = 0x0b;
/** The first byte of the end block, `<FS>`. */
export const MLLP_END = 0x1c;
/** The last byte of the end block, `<CR>`. */
export const MLLP_END_CR = 0x0d;

/** How much of an over-large frame's beginning {@link MllpFrameError.head} keeps. */
export const MLLP_HEAD_BYTES = 64 * 1024;

/** Why a byte stream is not MLLP. */
export type MllpFrameErrorCode = "too_large" | "no_start_block" | "garbage";

/** A byte stream that breaks MLLP framing; the reader is unusable after it. */
export class MllpFrameError extends Error {
  /** What broke: a frame over the limit, bytes outside a frame, or a malformed end block. */
  readonly code: MllpFrameErrorCode;
  /**
   * For `too_large`: the frame's first bytes (up to {@link MLLP_HEAD_BYTES}), so the receiver can
   * read the MSH segment and answer with a reject naming the message.
   */
  readonly head?: Uint8Array;

  /** An error of `code` saying `message`. */
  constructor(code: MllpFrameErrorCode, message: string, head?: Uint8Array) {
    super(message);
    this.name = "MllpFrameError";
    this.code = code;
    this.head = head;
  }
}

/** Wraps a payload in an MLLP frame: `<VT>` payload `<FS><CR>`. */
export function encodeMllpFrame(payload: Uint8Array): Uint8Array {
  const out = new Uint8Array(payload.byteLength + 3);
  out[0] = MLLP_START;
  out.set(payload, 1);
  out[payload.byteLength + 1] = MLLP_END;
  out[payload.byteLength + 2] = MLLP_END_CR;
  return out;
}

/** Options of {@link MllpFrameReader}. */
export interface MllpFrameReaderOptions {
  /** Largest payload accepted, in bytes; a frame growing past it throws `too_large` at once. */
  maxFrameBytes: number;
}

/** Bytes tolerated between frames: CR and LF (some senders end a frame with `<FS><CR><LF>`). */
function isBetweenFrames(b: number): boolean {
  return b === 0x0d || b === 0x0a;
}

/** Where the reader is. */
const enum State {
  /** Between frames, waiting for `<VT>`. */
  Outside,
  /** Inside a frame's payload. */
  Inside,
  /** Just after a `<FS>`, waiting for its `<CR>`. */
  AfterEnd,
}

/**
 * Splits an MLLP byte stream into the payloads of whole frames. Chunks are copied as they arrive
 * (the caller may reuse its read buffer), and a frame's copies are joined once at its end.
 */
export class MllpFrameReader {
  readonly #max: number;
  #state = State.Outside;
  #pieces: Uint8Array[] = [];
  #held = 0;
  #failed: MllpFrameError | undefined;

  /** A reader refusing payloads over `maxFrameBytes`. */
  constructor(options: MllpFrameReaderOptions) {
    if (!(options.maxFrameBytes > 0)) throw new RangeError("maxFrameBytes must be positive");
    this.#max = options.maxFrameBytes;
  }

  /** Bytes held of an unfinished frame (its payload so far). */
  get pending(): number {
    return this.#held;
  }

  /** True while a frame has begun and not ended. */
  get inFrame(): boolean {
    return this.#state !== State.Outside;
  }

  /**
   * Adds received bytes and returns the payloads of the frames they complete, in order; throws
   * {@link MllpFrameError} on bytes outside a frame, a start block inside one, an end block not
   * followed by `<CR>`, or a payload over the limit.
   */
  push(chunk: Uint8Array): Uint8Array[] {
    if (this.#failed) throw this.#failed;
    const out: Uint8Array[] = [];
    let at = 0;
    const end = chunk.byteLength;
    while (at < end) {
      if (this.#state === State.Outside) {
        const b = chunk[at];
        if (b === MLLP_START) {
          this.#state = State.Inside;
          at++;
        } else if (isBetweenFrames(b)) {
          at++;
        } else {
          throw this.#fail(
            "no_start_block",
            `byte 0x${
              b.toString(16).padStart(2, "0")
            } where a frame's start block <VT> was expected`,
          );
        }
      } else if (this.#state === State.Inside) {
        const fs = chunk.indexOf(MLLP_END, at);
        const stop = fs < 0 ? end : fs;
        const vt = chunk.subarray(at, stop).indexOf(MLLP_START);
        if (vt >= 0) {
          throw this.#fail(
            "garbage",
            `a start block <VT> inside a frame after ${
              this.#held + vt
            } bytes: the frame before it was cut short`,
          );
        }
        this.#take(chunk.subarray(at, stop));
        at = stop;
        if (fs >= 0) {
          this.#state = State.AfterEnd;
          at++;
        }
      } else {
        if (chunk[at] !== MLLP_END_CR) {
          throw this.#fail(
            "garbage",
            `byte 0x${chunk[at].toString(16).padStart(2, "0")} after <FS> where <CR> was expected`,
          );
        }
        at++;
        out.push(this.#frame());
      }
    }
    return out;
  }

  /** Keeps a copy of a payload piece, refusing to grow past the limit. */
  #take(piece: Uint8Array): void {
    if (piece.byteLength === 0) return;
    if (this.#held + piece.byteLength > this.#max) {
      const head = this.#head(piece);
      throw this.#fail(
        "too_large",
        `a frame of more than ${this.#max} bytes (the limit)`,
        head,
      );
    }
    this.#pieces.push(piece.slice());
    this.#held += piece.byteLength;
  }

  /** The first bytes of the frame being refused: what was held plus the start of `piece`. */
  #head(piece: Uint8Array): Uint8Array {
    const size = Math.min(MLLP_HEAD_BYTES, this.#held + piece.byteLength);
    const head = new Uint8Array(size);
    let filled = 0;
    for (const p of [...this.#pieces, piece]) {
      if (filled >= size) break;
      const n = Math.min(size - filled, p.byteLength);
      head.set(p.subarray(0, n), filled);
      filled += n;
    }
    return head;
  }

  /** Joins the current frame's pieces once and resets for the next frame. */
  #frame(): Uint8Array {
    const pieces = this.#pieces;
    let payload: Uint8Array;
    if (pieces.length === 1) payload = pieces[0];
    else {
      payload = new Uint8Array(this.#held);
      let filled = 0;
      for (const p of pieces) {
        payload.set(p, filled);
        filled += p.byteLength;
      }
    }
    this.#pieces = [];
    this.#held = 0;
    this.#state = State.Outside;
    return payload;
  }

  #fail(code: MllpFrameErrorCode, message: string, head?: Uint8Array): MllpFrameError {
    this.#pieces = [];
    this.#held = 0;
    this.#failed = new MllpFrameError(code, message, head);
    return this.#failed;
  }
}
