/**
 * One DIMSE association over a socket, either side. dcmjs-dimse's `Scp` class is its network
 * layer (PDUs, fragments, message ids); this subclass receives C-STORE datasets as raw bytes
 * (a `RawDataset`: no parse of pixel data, no re-encoding) and hands every event to a handler.
 */
import type { Buffer } from "node:buffer";
import type { Socket } from "node:net";
import { p10Header, TS } from "../../dicom/mod.ts";
import { RawDataset } from "./dataset.ts";
import { PduReader } from "./pdu_reader.ts";
import {
  type CCancelRequest,
  type CEchoRequest,
  type CFindRequest,
  type CGetRequest,
  type CMoveRequest,
  type CStoreRequest,
  lib,
  type LibAssociation,
  type LibContext,
  type LibResponse,
} from "./lib.ts";

/** Sends one or more responses to a request. */
export type Reply = (responses: LibResponse | LibResponse[]) => void;

/** dcmjs-dimse's per-service callback types differ; they all accept what Reply sends. */
// deno-lint-ignore no-explicit-any
type LibCallback = (responses: any) => void;

/** What a connection's owner does with its events; unset ones get a failure answer. */
export interface ConnectionHandler {
  associationRequested?(association: LibAssociation): void;
  associationAccepted?(association: LibAssociation): void;
  associationRejected?(reject: { result: number; source: number; reason: number }): void;
  released?(): void;
  echo?(request: CEchoRequest, reply: Reply): void;
  find?(request: CFindRequest, reply: Reply): void;
  get?(request: CGetRequest, reply: Reply): void;
  move?(request: CMoveRequest, reply: Reply): void;
  store?(request: CStoreRequest, reply: Reply): void;
  cancel?(request: CCancelRequest): void;
  aborted?(source: number, reason: number): void;
  error?(err: Error): void;
  closed?(): void;
}

/**
 * Collects a C-STORE dataset's fragments (dcmjs-dimse writes each PDV value here) behind the
 * Part 10 header of the instance, known from the command before the dataset arrives: the file is
 * assembled with a single copy, and the dataset is a view into it.
 */
class ChunkSink {
  readonly chunks: Uint8Array[] = [];
  readonly header: Uint8Array;
  size = 0;
  constructor(header: Uint8Array) {
    this.header = header;
  }
  write(chunk: Uint8Array): boolean {
    this.chunks.push(chunk);
    this.size += chunk.byteLength;
    return true;
  }
  end(): void {}
  once(): this {
    return this;
  }
  /** The whole Part 10 file. */
  file(): Uint8Array {
    const out = new Uint8Array(this.header.byteLength + this.size);
    out.set(this.header);
    let at = this.header.byteLength;
    for (const c of this.chunks) {
      out.set(c, at);
      at += c.byteLength;
    }
    return out;
  }
}

/** Timeouts of an association (milliseconds). */
export interface ConnectionTimeouts {
  connectTimeout?: number;
  associationTimeout?: number;
  pduTimeout?: number;
}

/** Largest PDU we accept (advertised in A-ASSOCIATE-AC), 64 KiB. */
const RECEIVE_PDU_LIMIT = 1 << 16;

/** The parts of dcmjs-dimse's network layer this class drives directly. */
interface NetworkInternals {
  connected: boolean;
  connectedTime?: number;
  pduTimeout: number;
  statistics: { addBytesReceived(n: number): void };
  _processPdu(pdu: Buffer): Promise<void>;
  emit(event: string, ...args: unknown[]): void;
}

/** A DIMSE association endpoint over a socket. */
export class DimseConnection extends lib.Scp {
  handler: ConnectionHandler = {};
  readonly socket: Socket;

  constructor(socket: Socket, timeouts: ConnectionTimeouts = {}) {
    super(socket, timeouts);
    this.socket = socket;
    this.on("associationAccepted", (a: LibAssociation) => this.handler.associationAccepted?.(a));
    this.on(
      "associationRejected",
      (r: { result: number; source: number; reason: number }) =>
        this.handler.associationRejected?.(r),
    );
    this.on("associationReleaseResponse", () => this.handler.released?.());
    this.on("networkError", (e: Error) => this.handler.error?.(e));
    this.on("close", () => this.handler.closed?.());
  }

  /** The association being negotiated or established. */
  get negotiated(): LibAssociation | undefined {
    return (this as unknown as { association?: LibAssociation }).association;
  }

  /**
   * Socket wiring (replaces the library's): PDUs are split by PduReader and processed strictly in
   * order, without an event-emitter hop or a re-concatenation per chunk; an idle socket (no byte
   * for `pduTimeout`) is an error.
   */
  _wrapSocket(): void {
    const self = this as unknown as NetworkInternals;
    const socket = (this as unknown as { socket: Socket }).socket;
    let queue = Promise.resolve();
    const fail = (message: string) => {
      self.connected = false;
      self.emit("networkError", new Error(message));
      socket.destroy();
    };
    const reader = new PduReader((pdu) => {
      queue = queue.then(() => self._processPdu(pdu));
    });
    socket.setTimeout(self.pduTimeout || 60_000);
    socket.on("connect", () => {
      self.connected = true;
      self.connectedTime = Date.now();
      self.emit("connect");
    });
    socket.on("data", (data: Buffer) => {
      self.statistics.addBytesReceived(data.length);
      try {
        reader.push(data);
      } catch (err) {
        fail(`connection error: ${(err as Error).message}`);
      }
    });
    socket.on("error", (err: Error) => fail(`connection error: ${err.message}`));
    socket.on("timeout", () => fail("connection timeout: no data from the peer"));
    socket.on("close", () => {
      self.connected = false;
      self.emit("close");
    });
  }

  /** Nothing to reset: this class keeps no interval timer. */
  _reset(): void {}

  override createStoreWritableStream(context: LibContext, request: CStoreRequest): never {
    return new ChunkSink(p10Header({
      transferSyntax: context.getAcceptedTransferSyntaxUid() ?? TS.implicitLE,
      sopClassUid: request.getAffectedSopClassUid(),
      sopInstanceUid: request.getAffectedSopInstanceUid(),
    })) as never;
  }

  override createDatasetFromStoreWritableStream(
    writable: unknown,
    context: LibContext,
    callback: (dataset: RawDataset) => void,
  ): void {
    const sink = writable as ChunkSink;
    const file = sink.file();
    const ts = context.getAcceptedTransferSyntaxUid() ?? TS.implicitLE;
    callback(new RawDataset(file.subarray(sink.header.byteLength), ts, file));
  }

  /**
   * Accept with our own receive limit in the A-ASSOCIATE-AC (dcmjs-dimse would write the smaller
   * of both sides' limits, so a peer offering 16 KiB would have to send us 16 KiB PDUs), while
   * still sending no PDU larger than the peer can receive.
   */
  override sendAssociationAccept(): void {
    const association = this.negotiated!;
    const peerLimit = association.getMaxPduLength();
    association.setMaxPduLength(RECEIVE_PDU_LIMIT);
    super.sendAssociationAccept();
    association.setMaxPduLength(peerLimit || RECEIVE_PDU_LIMIT);
  }

  override associationRequested(association: LibAssociation): void {
    if (this.handler.associationRequested) return this.handler.associationRequested(association);
    this.sendAssociationReject();
  }

  override associationReleaseRequested(): void {
    this.sendAssociationReleaseResponse();
    this.handler.released?.();
  }

  override cEchoRequest(request: CEchoRequest, reply: LibCallback): void {
    if (this.handler.echo) return this.handler.echo(request, reply);
    reply(lib.responses.CEchoResponse.fromRequest(request));
  }

  override cFindRequest(request: CFindRequest, reply: LibCallback): void {
    if (this.handler.find) return this.handler.find(request, reply);
    reply(lib.responses.CFindResponse.fromRequest(request));
  }

  override cGetRequest(request: CGetRequest, reply: LibCallback): void {
    if (this.handler.get) return this.handler.get(request, reply);
    reply(lib.responses.CGetResponse.fromRequest(request));
  }

  override cMoveRequest(request: CMoveRequest, reply: LibCallback): void {
    if (this.handler.move) return this.handler.move(request, reply);
    reply(lib.responses.CMoveResponse.fromRequest(request));
  }

  override cStoreRequest(request: CStoreRequest, reply: LibCallback): void {
    if (this.handler.store) return this.handler.store(request, reply);
    reply(lib.responses.CStoreResponse.fromRequest(request));
  }

  override cCancelRequest(request: CCancelRequest): void {
    this.handler.cancel?.(request);
  }

  override abort(source: number, reason: number): void {
    this.handler.aborted?.(source, reason);
    this.socket.destroy();
  }
}
