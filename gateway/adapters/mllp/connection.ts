/**
 * One MLLP connection: frames are read with {@link MllpFrameReader}, handed to the handler one at a
 * time in order (the socket is paused while a message is handled, so a sender that pipelines
 * waits on TCP), and the handler's answers are written as frames before the next message. A
 * connection idle for `idleMs` (nothing received while waiting for a message, or an answer not
 * taken by the peer within it) is closed; so is one that breaks framing.
 */
import type net from "node:net";
import { encodeMllpFrame, MllpFrameError, MllpFrameReader } from "./frame.ts";

/** Longest wait for a peer to finish after the gateway ended the connection. */
const DRAIN_MS = 5_000;

/** Why a connection ended. */
export type MllpCloseReason =
  | "peer_closed"
  | "idle_timeout"
  | "write_timeout"
  | "framing"
  | "handler_closed"
  | "error"
  | "shutdown";

/** What the connection asks of its owner. */
export interface MllpHandler {
  /**
   * A whole message's payload; resolves with the payloads of the answers to send, in order.
   * `signal` is aborted when the connection ends.
   */
  message(payload: Uint8Array, signal: AbortSignal): Promise<Uint8Array[]>;
  /**
   * Framing broke (`too_large`, `no_start_block`, `garbage`): resolves with answers to send
   * before the connection is closed (e.g. a reject naming the limit), possibly none.
   */
  framingError(err: MllpFrameError): Uint8Array[];
  /** The connection ended; `pending` bytes of an unfinished frame were dropped. */
  closed(reason: MllpCloseReason, pending: number, detail?: string): void;
}

/** Limits of a connection. */
export interface MllpConnectionOptions {
  maxFrameBytes: number;
  /** Milliseconds without progress after which the connection is closed. */
  idleMs: number;
}

/** Serves one socket until it closes. */
export class MllpConnection {
  readonly socket: net.Socket;
  readonly #reader: MllpFrameReader;
  readonly #handler: MllpHandler;
  readonly #idleMs: number;
  readonly #queue: Uint8Array[] = [];
  #busy = false;
  #closing = false;
  #ended = false;
  #reason: MllpCloseReason = "peer_closed";
  #detail: string | undefined;
  /** Aborted when the connection ends: handlers stop waiting for a gone peer. */
  readonly closedSignal: AbortSignal;
  readonly #abort = new AbortController();

  constructor(socket: net.Socket, handler: MllpHandler, options: MllpConnectionOptions) {
    this.socket = socket;
    this.#handler = handler;
    this.#idleMs = options.idleMs;
    this.#reader = new MllpFrameReader({ maxFrameBytes: options.maxFrameBytes });
    this.closedSignal = this.#abort.signal;
    socket.setNoDelay(true);
    socket.setTimeout(this.#idleMs, () => this.#end("idle_timeout"));
    socket.on("data", (chunk: Uint8Array) => this.#data(chunk));
    socket.on("error", (err: Error) => this.#end("error", err.message));
    socket.on("end", () => {
      // The peer is done sending: finish the messages in hand, then close.
      if (!this.#busy && this.#queue.length === 0) this.#end("peer_closed");
    });
    socket.on("close", () => this.#finish());
  }

  /** Close the connection now (shutdown). */
  close(): void {
    this.#end("shutdown");
  }

  /**
   * Close once the message in hand (if any) is answered: a draining gateway does not wait for an
   * idle sender, which may keep its connection open for days.
   */
  closeWhenIdle(): void {
    this.#closing = true;
    if (!this.#busy && this.#queue.length === 0) this.#end("shutdown");
  }

  #data(chunk: Uint8Array): void {
    if (this.#ended) return;
    let frames: Uint8Array[];
    try {
      frames = this.#reader.push(chunk);
    } catch (err) {
      if (!(err instanceof MllpFrameError)) throw err;
      void this.#framing(err);
      return;
    }
    if (frames.length === 0) return;
    this.#queue.push(...frames);
    if (!this.#busy) void this.#drain();
  }

  /** Handles the queued messages one by one; the socket is paused meanwhile. */
  async #drain(): Promise<void> {
    this.#busy = true;
    this.socket.pause();
    // While a message is in the pipeline, the socket's own idle timer does not run: the wait is
    // ours, not the peer's.
    this.socket.setTimeout(0);
    try {
      while (this.#queue.length && !this.#ended) {
        const payload = this.#queue.shift()!;
        let answers: Uint8Array[];
        try {
          answers = await this.#handler.message(payload, this.closedSignal);
        } catch (err) {
          this.#end("error", (err as Error).message);
          return;
        }
        if (this.#ended) return;
        if (!await this.#write(answers)) return;
      }
    } finally {
      this.#busy = false;
    }
    if (this.#ended) return;
    if (this.#closing) {
      this.#end("shutdown");
      return;
    }
    if (this.socket.readableEnded) {
      this.#end("peer_closed");
      return;
    }
    this.socket.setTimeout(this.#idleMs);
    this.socket.resume();
  }

  /** Writes answers as frames; false (and the connection closed) when the peer did not take them. */
  async #write(answers: Uint8Array[]): Promise<boolean> {
    for (const a of answers) {
      const frame = encodeMllpFrame(a);
      if (this.socket.write(frame)) continue;
      const drained = await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), this.#idleMs);
        const done = (ok: boolean) => {
          clearTimeout(timer);
          this.socket.off("drain", onDrain);
          this.socket.off("close", onClose);
          resolve(ok);
        };
        const onDrain = () => done(true);
        const onClose = () => done(false);
        this.socket.once("drain", onDrain);
        this.socket.once("close", onClose);
      });
      if (!drained) {
        this.#end("write_timeout");
        return false;
      }
    }
    return true;
  }

  async #framing(err: MllpFrameError): Promise<void> {
    this.#reason = "framing";
    this.#detail = `${err.code}: ${err.message}`;
    this.socket.pause();
    let answers: Uint8Array[] = [];
    try {
      answers = this.#handler.framingError(err);
    } catch {
      // no answer then: the connection is closed all the same
    }
    if (answers.length) {
      // Best effort: the reject goes out before the close, if the peer takes it.
      await this.#write(answers);
    }
    this.#end("framing", this.#detail);
  }

  #end(reason: MllpCloseReason, detail?: string): void {
    if (this.#ended) return;
    this.#ended = true;
    if (this.#reason !== "framing") {
      this.#reason = reason;
      this.#detail = detail;
    }
    this.#abort.abort();
    if (reason === "peer_closed" || reason === "framing") {
      // What was written (a reject) is flushed before the close. What the peer still sends (the
      // rest of a 10 MB frame) is read and dropped meanwhile: closing with unread bytes would
      // reset the connection and could lose the reject. A peer that does not finish within
      // DRAIN_MS (or the idle timeout, if shorter) is cut off.
      this.socket.removeAllListeners("data");
      this.socket.on("data", () => {});
      this.socket.resume();
      this.socket.end();
      const timer = setTimeout(() => this.socket.destroy(), Math.min(this.#idleMs, DRAIN_MS));
      this.socket.once("close", () => clearTimeout(timer));
    } else this.socket.destroy();
  }

  #finish(): void {
    if (!this.#ended) {
      this.#ended = true;
      this.#abort.abort();
    }
    this.#handler.closed(this.#reason, this.#reader.pending, this.#detail);
  }
}
