/**
 * One DIMSE association over a socket, either side. dcmjs-dimse's `Scp` class is its network
 * layer (association PDUs, message ids, responses); this subclass replaces its receive path and
 * its P-DATA writer. Received bytes go through PduReader and MessageRouter: a C-STORE-RQ is taken
 * in here (command set decoded directly, dataset copied once into its Part 10 file and handed on
 * as a `RawDataset`: no parse of pixel data, no re-encoding); other messages reach the library as
 * PDUs. The handler may spool the file while it arrives, and may hand its memory back for the
 * association's next instance; otherwise memory for it is prepared once the response is sent.
 * Command sets are written directly (no dcmjs round trip) and datasets go out as views in one
 * corked write. Every event goes to a handler.
 */
import { Buffer } from "node:buffer";
import { p10Header, TS } from "../../dicom/mod.ts";
import { decodeCommand, encodeCommand } from "./command_set.ts";
import { RawDataset } from "./dataset.ts";
import { type FileSpool, InstanceBuffer, prefaulted } from "./instance_buffer.ts";
import { MessageRouter } from "./message_router.ts";
import { COMMAND, LAST, pdvHeader, pdvPdu } from "./pdata.ts";
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
  type LibDataset,
  type LibResponse,
} from "./dcmjs_dimse.ts";

/**
 * The socket an association runs over: node:net/node:tls sockets and TcpSocket (Deno's TCP with a
 * reused read buffer) both have this shape.
 */
export interface DimseSocket {
  readonly remoteAddress?: string;
  readonly remotePort?: number;
  write(bytes: Uint8Array): boolean;
  cork(): void;
  uncork(): void;
  setNoDelay(noDelay?: boolean): unknown;
  setTimeout(ms: number): unknown;
  destroy(): unknown;
  // deno-lint-ignore no-explicit-any
  on(event: string, listener: (...args: any[]) => void): unknown;
  // deno-lint-ignore no-explicit-any
  once(event: string, listener: (...args: any[]) => void): unknown;
}

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
  /**
   * Where a C-STORE's file goes while it arrives (e.g. a temporary file); the same spool is given
   * to `store` with the complete request, and is aborted if the association breaks first.
   */
  storeSpool?(sopClassUid: string, sopInstanceUid: string): FileSpool | undefined;
  /**
   * A received C-STORE. `recycle`, called before `reply`, says nothing refers to the instance's
   * bytes any more: their memory then takes the next instance of the association.
   */
  store?(request: CStoreRequest, reply: Reply, spool?: FileSpool, recycle?: () => void): void;
  cancel?(request: CCancelRequest): void;
  aborted?(source: number, reason: number): void;
  error?(err: Error): void;
  closed?(): void;
}

/** Timeouts of an association (milliseconds). */
export interface ConnectionTimeouts {
  connectTimeout?: number;
  associationTimeout?: number;
  pduTimeout?: number;
}

/** Largest PDU we accept (advertised in A-ASSOCIATE-AC), 64 KiB. */
const RECEIVE_PDU_LIMIT = 1 << 16;

/** Largest dataset for which memory is prepared before the next C-STORE arrives, 64 MiB. */
const SPARE_LIMIT = 64 << 20;
/** Room in prepared memory for the Part 10 header (its UIDs vary in length). */
const HEADER_ROOM = 512;

/** Largest PDU dcmjs-dimse sends whatever the peer allows, 4 MiB. */
const SEND_PDU_CAP = 4 << 20;

/** The parts of dcmjs-dimse's network layer this class drives directly. */
interface NetworkInternals {
  connected: boolean;
  connectedTime?: number;
  pduTimeout: number;
  datasetWriteOptions: Record<string, unknown>;
  datasetNameMap: Record<string, unknown>;
  statistics: { addBytesReceived(n: number): void; addBytesSent(n: number): void };
  _processPdu(pdu: Buffer): Promise<void>;
  _sendDimse(dimse: { context: LibContext; command: LibResponse }): void;
  emit(event: string, ...args: unknown[]): void;
}

/** What `_sendPDataTF` is given: a request or response with its command set and dataset. */
interface OutgoingCommand {
  getCommandDataset(): LibDataset & { getDenaturalizedCommandDataset(): Buffer };
  getDataset(): LibDataset | undefined;
}

/** A DIMSE association endpoint over a socket. */
export class DimseConnection extends lib.Scp {
  handler: ConnectionHandler = {};
  readonly socket: DimseSocket;

  constructor(socket: DimseSocket, timeouts: ConnectionTimeouts = {}) {
    // dcmjs-dimse's declarations want a node Socket; it only calls write() (and _wrapSocket).
    super(socket as never, timeouts);
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
   * Socket wiring (replaces the library's): bytes are split by PduReader and routed by
   * MessageRouter; PDUs for the library and received C-STORE-RQs are processed strictly in order,
   * without an event-emitter hop; an idle socket (no byte for `pduTimeout`) is an error.
   */
  _wrapSocket(): void {
    const self = this as unknown as NetworkInternals;
    const socket = (this as unknown as { socket: DimseSocket }).socket;
    let queue = Promise.resolve();
    const fail = (message: string) => {
      self.connected = false;
      self.emit("networkError", new Error(message));
      socket.destroy();
    };
    const reader = new PduReader(
      new MessageRouter({
        library: (pdu) => {
          queue = queue.then(() => self._processPdu(pdu));
        },
        decodeCommand: (bytes) =>
          decodeCommand(bytes) ??
            new lib.Dataset(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength))
              .getElements(),
        storeBuffer: (contextId, command) => this.#storeBuffer(contextId, command),
        store: (contextId, command, file) => {
          queue = queue.then(() => {
            try {
              this.#received(contextId, command, file);
            } catch (err) {
              fail(`cannot process a C-STORE request: ${(err as Error).message}`);
            }
          });
        },
      }),
    );
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
      this.#receiving?.spool?.abort();
      this.#receiving = undefined;
      this.#spare = undefined;
      self.emit("close");
    });
  }

  /** Dataset size of the last C-STORE received (the next one is likely the same size). */
  #lastDatasetSize = 0;
  /** The C-STORE whose dataset is arriving. */
  #receiving: InstanceBuffer | undefined;
  /** Memory prepared for the next C-STORE (the size of the last one). */
  #spare: Uint8Array | undefined;

  /** The accepted presentation context `contextId`; throws when there is none. */
  #context(contextId: number): LibContext {
    const context = this.negotiated?.getPresentationContext(contextId);
    if (!context || context.getResult() !== lib.constants.PresentationContextResult.Accept) {
      throw new Error(`no accepted presentation context ${contextId}`);
    }
    return context;
  }

  /** The file a C-STORE-RQ's dataset is received into, its Part 10 header written first. */
  #storeBuffer(contextId: number, command: Record<string, unknown>): InstanceBuffer {
    const sopClassUid = String(command.AffectedSOPClassUID ?? "");
    const sopInstanceUid = String(command.AffectedSOPInstanceUID ?? "");
    const header = p10Header({
      transferSyntax: this.#context(contextId).getAcceptedTransferSyntaxUid() ?? TS.implicitLE,
      sopClassUid,
      sopInstanceUid,
    });
    const spool = this.handler.storeSpool?.(sopClassUid, sopInstanceUid);
    const spare = this.#spare;
    this.#spare = undefined;
    this.#receiving = new InstanceBuffer(header, this.#lastDatasetSize, spool, spare);
    return this.#receiving;
  }

  /** A complete C-STORE-RQ: to the handler, its reply sent on the request's context. */
  #received(contextId: number, command: Record<string, unknown>, file: InstanceBuffer): void {
    this.#receiving = undefined;
    let context: LibContext;
    try {
      context = this.#context(contextId);
    } catch (err) {
      file.spool?.abort();
      throw err;
    }
    this.#lastDatasetSize = file.datasetLength;
    const bytes = file.file();
    const ts = context.getAcceptedTransferSyntaxUid() ?? TS.implicitLE;
    const request = new lib.requests.CStoreRequest(
      new RawDataset(bytes.subarray(file.headerLength), ts, bytes),
    );
    request.setCommandDataset(new lib.Dataset(command, TS.implicitLE));
    const self = this as unknown as NetworkInternals;
    let recycled = false;
    const reply: Reply = (responses) => {
      for (const rsp of Array.isArray(responses) ? responses : [responses]) {
        self._sendDimse({ context, command: rsp });
      }
      // The sender now reads and sends its next instance: prepare memory for it meanwhile (fresh
      // memory is faulted in now, not while the instance arrives).
      const size = this.#lastDatasetSize + HEADER_ROOM;
      if (size > SPARE_LIMIT || !self.connected) return;
      this.#spare = recycled ? new Uint8Array(bytes.buffer) : prefaulted(size);
    };
    const recycle = () => recycled = true;
    if (this.handler.store) return this.handler.store(request, reply, file.spool, recycle);
    file.spool?.abort();
    reply(lib.responses.CStoreResponse.fromRequest(request));
  }

  /**
   * Send a command and its dataset as P-DATA-TF PDUs (replaces the library's): the command set is
   * encoded directly when it holds only command elements (dcmjs otherwise), the dataset is sent in
   * fragments of the peer's maximum PDU length that are views of its bytes, all in one corked write.
   */
  _sendPDataTF(command: OutgoingCommand, contextId: number, maxPduLength: number): void {
    const self = this as unknown as NetworkInternals;
    const limit = maxPduLength === 0 ? SEND_PDU_CAP : Math.min(maxPduLength, SEND_PDU_CAP);
    const commandSet = command.getCommandDataset();
    const encoded = encodeCommand(commandSet.getElements()) ??
      new Uint8Array(commandSet.getDenaturalizedCommandDataset());
    const dataset = command.getDataset()?.getDenaturalizedDataset(
      self.datasetWriteOptions,
      self.datasetNameMap,
    );
    const socket = this.socket;
    let sent = 0;
    const write = (bytes: Uint8Array) => {
      socket.write(bytes);
      sent += bytes.byteLength;
    };
    socket.cork();
    try {
      write(pdvPdu(contextId, COMMAND | LAST, encoded));
      if (dataset) {
        const fragment = limit - 6;
        let at = 0;
        do {
          const n = Math.min(fragment, dataset.byteLength - at);
          const last = at + n >= dataset.byteLength;
          write(pdvHeader(contextId, last ? LAST : 0, n));
          if (n > 0) write(dataset.subarray(at, at + n));
          at += n;
        } while (at < dataset.byteLength);
      }
    } finally {
      socket.uncork();
      self.statistics.addBytesSent(sent);
    }
  }

  /** Nothing to reset: this class keeps no interval timer. */
  _reset(): void {}

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
