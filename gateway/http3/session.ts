/**
 * One HTTP/3 connection, either side (RFC 9114 §6): our control stream with SETTINGS, our QPACK
 * encoder and decoder streams, and the peer's unidirectional streams: its control stream (SETTINGS
 * first, then GOAWAY and the like), its QPACK streams, push streams (refused: we never allow
 * push) and unknown stream types (ignored, as §6.2.3 requires). A connection error closes the QUIC
 * connection with its code; nothing here throws out of the caller's task.
 */
import { connectionError, errorName, H3, Http3Error } from "./errors.ts";
import { decodeIdPayload, encodeGoaway, FRAME, HTTP2_ONLY_FRAMES, STREAM_TYPE } from "./frames.ts";
import { QpackDecoder } from "./qpack_decoder.ts";
import { ByteCursor, QpackFormatError, QpackTruncatedError } from "./qpack_primitives.ts";
import { decodeSettings, encodeSettings, type Settings } from "./settings.ts";
import { FrameStreamReader, StreamAbortedError } from "./stream_reader.ts";

/** Largest control-stream frame we accept (SETTINGS, GOAWAY...). */
const MAX_CONTROL_FRAME = 16 * 1024;

/** Options of a session. */
export interface SessionOptions {
  role: "client" | "server";
  /** SETTINGS_MAX_FIELD_SECTION_SIZE we announce (and enforce on what we receive). */
  maxFieldSectionSize: number;
  /** Told about connection errors, for logs. */
  onConnectionError?(err: Http3Error): void;
  /** A GOAWAY arrived with this id. */
  onGoaway?(id: number): void;
}

/** An HTTP/3 connection over a QUIC connection. */
export class Http3Session {
  readonly conn: Deno.QuicConn;
  readonly role: "client" | "server";
  readonly decoder: QpackDecoder;
  readonly maxFieldSectionSize: number;
  /** The peer's SETTINGS, once received. */
  peerSettings: Settings | null = null;
  /** Lowest id of a GOAWAY received (stream id from a server, push id from a client). */
  goawayReceived: number | null = null;
  readonly #opts: SessionOptions;
  #control: WritableStreamDefaultWriter<Uint8Array> | undefined;
  #decoderStream: WritableStreamDefaultWriter<Uint8Array> | undefined;
  #encoderStream: WritableStreamDefaultWriter<Uint8Array> | undefined;
  #peerStreams = new Set<number>();
  #closed = false;
  #closeError: Http3Error | undefined;
  readonly #closedPromise: Promise<void>;

  constructor(conn: Deno.QuicConn, opts: SessionOptions) {
    this.conn = conn;
    this.role = opts.role;
    this.#opts = opts;
    this.maxFieldSectionSize = opts.maxFieldSectionSize;
    this.decoder = new QpackDecoder({
      maxTableCapacity: 0,
      blockedStreams: 0,
      maxFieldSectionSize: opts.maxFieldSectionSize,
    });
    this.#closedPromise = conn.closed.then(() => {}, () => {}).finally(() => {
      this.#closed = true;
    });
  }

  /** Resolves when the QUIC connection is closed (by either side). */
  get closed(): Promise<void> {
    return this.#closedPromise;
  }

  /** True once the connection is closed or closing. */
  get isClosed(): boolean {
    return this.#closed;
  }

  /** The connection error that closed the connection, when one did. */
  get closeError(): Http3Error | undefined {
    return this.#closeError;
  }

  /** Open our control and QPACK streams, send SETTINGS, start reading the peer's streams. */
  async open(): Promise<void> {
    const control = await this.conn.createUnidirectionalStream();
    this.#control = control.getWriter();
    const settings = encodeSettings({
      qpackMaxTableCapacity: 0,
      qpackBlockedStreams: 0,
      maxFieldSectionSize: this.maxFieldSectionSize,
    });
    const first = new Uint8Array(1 + settings.length);
    first[0] = STREAM_TYPE.CONTROL;
    first.set(settings, 1);
    await this.#control.write(first);
    const enc = await this.conn.createUnidirectionalStream();
    this.#encoderStream = enc.getWriter();
    await this.#encoderStream.write(Uint8Array.of(STREAM_TYPE.QPACK_ENCODER));
    const dec = await this.conn.createUnidirectionalStream();
    this.#decoderStream = dec.getWriter();
    await this.#decoderStream.write(Uint8Array.of(STREAM_TYPE.QPACK_DECODER));
    void this.#acceptUni();
  }

  /** Send GOAWAY with `id` on our control stream. */
  async sendGoaway(id: number): Promise<void> {
    if (this.#closed || !this.#control) return;
    await this.#control.write(encodeGoaway(id)).catch(() => {});
  }

  /** Close the connection with an HTTP/3 error code. */
  close(code: number = H3.NO_ERROR, reason = ""): void {
    if (this.#closed) return;
    this.#closed = true;
    try {
      this.conn.close({ closeCode: code, reason: reason.slice(0, 200) });
    } catch {
      // already closed
    }
  }

  /**
   * Handle an error from any task of this connection: a connection error closes it with its
   * code; an aborted stream or a closed connection needs nothing more.
   */
  fail(err: unknown): void {
    if (err instanceof Http3Error && err.scope === "connection") {
      if (!this.#closed) {
        this.#closeError = err;
        this.#opts.onConnectionError?.(err);
      }
      this.close(err.code, err.message);
      return;
    }
    if (err instanceof StreamAbortedError || this.#closed) return;
    if (err instanceof Http3Error) return;
    const internal = connectionError(H3.INTERNAL_ERROR, (err as Error)?.message ?? String(err));
    this.#closeError = internal;
    this.#opts.onConnectionError?.(internal);
    this.close(internal.code, internal.message);
  }

  async #acceptUni(): Promise<void> {
    try {
      for await (const stream of this.conn.incomingUnidirectionalStreams) {
        void this.#peerUni(stream).catch((err) => this.fail(err));
      }
    } catch {
      // the connection closed
    }
  }

  async #peerUni(stream: ReadableStream<Uint8Array>): Promise<void> {
    const reader = new FrameStreamReader(stream);
    const type = await reader.varint();
    if (type === null) return;
    switch (type) {
      case STREAM_TYPE.CONTROL:
      case STREAM_TYPE.QPACK_ENCODER:
      case STREAM_TYPE.QPACK_DECODER:
        if (this.#peerStreams.has(type)) {
          throw connectionError(H3.STREAM_CREATION_ERROR, `second stream of type ${type}`);
        }
        this.#peerStreams.add(type);
        break;
      case STREAM_TYPE.PUSH:
        if (this.role === "server") {
          throw connectionError(H3.STREAM_CREATION_ERROR, "push stream from a client");
        }
        throw connectionError(H3.ID_ERROR, "push stream without MAX_PUSH_ID");
      default:
        // Unknown or reserved stream type: stop reading it, without error (§6.2).
        reader.cancel();
        return;
    }
    try {
      if (type === STREAM_TYPE.CONTROL) await this.#readControl(reader);
      else if (type === STREAM_TYPE.QPACK_ENCODER) await this.#readEncoder(reader);
      else await this.#readDecoder(reader);
    } catch (err) {
      if (err instanceof StreamAbortedError && !this.#closed) {
        throw connectionError(H3.CLOSED_CRITICAL_STREAM, "a critical stream was reset");
      }
      throw err;
    }
    if (!this.#closed) {
      throw connectionError(H3.CLOSED_CRITICAL_STREAM, `critical stream of type ${type} closed`);
    }
  }

  async #readControl(reader: FrameStreamReader): Promise<void> {
    let first = true;
    while (true) {
      const h = await reader.frameHeader();
      if (!h) return;
      if (first && h.type !== FRAME.SETTINGS) {
        throw connectionError(H3.MISSING_SETTINGS, "control stream does not start with SETTINGS");
      }
      if (h.length > MAX_CONTROL_FRAME) {
        throw connectionError(H3.EXCESSIVE_LOAD, `control frame of ${h.length} bytes`);
      }
      const payload = await reader.payload(h.length);
      switch (h.type) {
        case FRAME.SETTINGS:
          if (!first) throw connectionError(H3.FRAME_UNEXPECTED, "second SETTINGS frame");
          this.peerSettings = decodeSettings(payload);
          break;
        case FRAME.GOAWAY: {
          const id = decodeIdPayload(h.type, payload);
          if (this.role === "client" && id % 4 !== 0) {
            throw connectionError(H3.ID_ERROR, `GOAWAY with non-request stream id ${id}`);
          }
          if (this.goawayReceived !== null && id > this.goawayReceived) {
            throw connectionError(H3.ID_ERROR, "GOAWAY id increased");
          }
          this.goawayReceived = id;
          this.#opts.onGoaway?.(id);
          break;
        }
        case FRAME.MAX_PUSH_ID:
          if (this.role === "client") {
            throw connectionError(H3.FRAME_UNEXPECTED, "MAX_PUSH_ID from a server");
          }
          decodeIdPayload(h.type, payload);
          break;
        case FRAME.CANCEL_PUSH:
          decodeIdPayload(h.type, payload);
          // No push was ever promised or allowed on this connection.
          throw connectionError(H3.ID_ERROR, "CANCEL_PUSH for a push that cannot exist");
        case FRAME.DATA:
        case FRAME.HEADERS:
        case FRAME.PUSH_PROMISE:
          throw connectionError(H3.FRAME_UNEXPECTED, `frame 0x${h.type} on the control stream`);
        default:
          if (HTTP2_ONLY_FRAMES.has(h.type)) {
            throw connectionError(H3.FRAME_UNEXPECTED, `HTTP/2 frame type 0x${h.type}`);
          }
          // unknown and reserved frame types are ignored
      }
      first = false;
    }
  }

  async #readEncoder(reader: FrameStreamReader): Promise<void> {
    while (true) {
      const chunk = await reader.next();
      if (!chunk) return;
      this.decoder.onEncoderStream(chunk);
      const instructions = this.decoder.takeInstructions();
      if (instructions) await this.#decoderStream?.write(instructions);
    }
  }

  async #readDecoder(reader: FrameStreamReader): Promise<void> {
    let pending = new Uint8Array(0);
    while (true) {
      const chunk = await reader.next();
      if (!chunk) return;
      const buf = new Uint8Array(pending.length + chunk.length);
      buf.set(pending);
      buf.set(chunk, pending.length);
      const cur = new ByteCursor(buf);
      try {
        while (!cur.done) {
          const start = cur.pos;
          const b = cur.peek();
          try {
            if (b & 0x80) {
              cur.int(7);
              // We never send a section with dynamic references, so none can be acknowledged.
              throw new QpackFormatError("Section Acknowledgment of a section we never sent");
            } else if (b & 0x40) {
              cur.int(6); // Stream Cancellation: nothing to release
            } else {
              cur.int(6);
              throw new QpackFormatError("Insert Count Increment beyond our insertions (none)");
            }
          } catch (err) {
            if (err instanceof QpackTruncatedError) {
              cur.pos = start;
              break;
            }
            throw err;
          }
        }
      } catch (err) {
        if (err instanceof QpackFormatError) {
          throw connectionError(H3.QPACK_DECODER_STREAM_ERROR, err.message);
        }
        throw err;
      }
      pending = buf.slice(cur.pos);
    }
  }
}

/** A readable description of a QUIC close, for logs and errors. */
export function describeClose(info: { closeCode: number; reason: string }): string {
  return `${errorName(info.closeCode)}${info.reason ? ` (${info.reason})` : ""}`;
}
