/**
 * One DIMSE association over a socket, either side: the DICOM upper layer (PS3.8) and DIMSE
 * message exchange (PS3.7) are ours; dcmjs-dimse provides the message and association model (its
 * public request, response, dataset and association classes) and dcmjs the dataset codec.
 *
 * Received bytes go through PduReader and MessageRouter. A C-STORE-RQ is taken in as it arrives
 * (command set decoded directly, dataset copied once into its Part 10 file and handed on as a
 * `RawDataset`: no parse of pixel data, no re-encoding); the handler may spool the file while it
 * arrives, and may hand its memory back for the association's next instance, otherwise memory for
 * it is prepared once the response is sent. Other messages arrive whole. Requests we send run one
 * at a time (message ids, responses matched to them); command sets are written directly and
 * datasets go out as views in one corked write. Every event goes to a handler.
 */
import { Buffer } from "node:buffer";
import { p10Header, readDataset, STATUS, TS, writeDataset } from "../../dicom/mod.ts";
import {
  decodeAbort,
  decodeAssociateAccept,
  decodeAssociateReject,
  decodeAssociateRequest,
  encodeAbort,
  encodeAssociateAccept,
  encodeAssociateReject,
  encodeAssociateRequest,
  encodeRelease,
  PDU,
} from "./association_pdus.ts";
import { decodeCommand, encodeCommand, NO_DATASET } from "./command_set.ts";
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
  type LibRequest,
  type LibResponse,
  newRequest,
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

/** Receives the responses to a request sent with `sendRequest`. */
export interface RequestListener {
  /** Each response, pending ones first, the final one last. */
  response(response: LibResponse): void;
  /** After the final response, or when the request could not be sent. */
  done(): void;
}

/** A request to send: where its responses go, and its context when the sender knew it. */
interface Outgoing {
  request: LibRequest;
  listener?: RequestListener;
  context?: LibContext;
}

/** Sends one or more responses to a request. */
export type Reply = (responses: LibResponse | LibResponse[]) => void;

/** What a connection's owner does with its events; unset ones get a failure answer. */
export interface ConnectionHandler {
  /** An outgoing connection is established (send the association request now). */
  connected?(): void;
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
  /** Idle time allowed on the socket: no byte from the peer for this long is an error (60 s). */
  pduTimeout?: number;
}

/** Largest PDU we accept (advertised in A-ASSOCIATE-AC and -RQ), 64 KiB. */
const RECEIVE_PDU_LIMIT = 1 << 16;

/** Largest dataset for which memory is prepared before the next C-STORE arrives, 64 MiB. */
const SPARE_LIMIT = 64 << 20;
/** Room in prepared memory for the Part 10 header (its UIDs vary in length). */
const HEADER_ROOM = 512;

/** Largest PDU we send whatever the peer allows, 4 MiB. */
const SEND_PDU_CAP = 4 << 20;

/** Transfer syntaxes a dataset is converted between when the accepted one differs. */
const CONVERTIBLE: readonly string[] = [TS.implicitLE, TS.explicitLE];

/** Response classes by command field (PS3.7 E.1). */
const RESPONSES: Record<number, () => LibResponse> = {
  0x8001: () => new lib.responses.CStoreResponse(0, ""),
  0x8010: () => new lib.responses.CGetResponse(0, ""),
  0x8020: () => new lib.responses.CFindResponse(0, ""),
  0x8021: () => new lib.responses.CMoveResponse(0, ""),
  0x8030: () => new lib.responses.CEchoResponse(0, ""),
};

/**
 * Most C-FIND pending responses held back before they are written: matches go out with the final
 * response in one write (each loopback write costs about as much as a DIMSE round trip).
 */
const HOLD_PENDING = 64;

/** True for the Pending statuses (FF00H, FF01H). */
function isPending(status: number): boolean {
  return status === STATUS.pending || status === STATUS.pendingWarning;
}

/** Command fields of the requests an association serves. */
const C_STORE_RQ = 0x0001;
const C_GET_RQ = 0x0010;
const C_FIND_RQ = 0x0020;
const C_MOVE_RQ = 0x0021;
const C_ECHO_RQ = 0x0030;
const C_CANCEL_RQ = 0x0fff;
/** Status "unrecognized operation" (PS3.7 C.4.2) for requests of other services. */
const UNRECOGNIZED_OPERATION = 0x0211;

/** A DIMSE association endpoint over a socket. */
export class DimseConnection {
  handler: ConnectionHandler = {};
  readonly socket: DimseSocket;
  #association: LibAssociation | undefined;
  /** Largest PDU the peer receives (0: no limit), from its A-ASSOCIATE-RQ or -AC. */
  #sendLimit = 0;
  #messageId = 0;
  /** Requests waiting to be sent, and the one whose responses are awaited. */
  readonly #queue: Outgoing[] = [];
  #current: Outgoing | undefined;
  /** Accepted presentation contexts by id, as messages name them (filled on first use). */
  readonly #contexts = new Map<number, LibContext>();
  /** Dataset size of the last C-STORE received (the next one is likely the same size). */
  #lastDatasetSize = 0;
  /** The C-STORE whose dataset is arriving. */
  #receiving: InstanceBuffer | undefined;
  /** Memory prepared for the next C-STORE (the size of the last one). */
  #spare: Uint8Array | undefined;
  #open = true;
  /** C-FIND pending responses held back to go out in one write with what follows them. */
  #held = 0;

  constructor(socket: DimseSocket, timeouts: ConnectionTimeouts = {}) {
    this.socket = socket;
    this.#wire(timeouts.pduTimeout ?? 60_000);
  }

  /** The association being negotiated or established. */
  get negotiated(): LibAssociation | undefined {
    return this.#association;
  }

  /** Propose `association` (A-ASSOCIATE-RQ). */
  sendAssociationRequest(association: LibAssociation): void {
    this.#association = association;
    this.#write(encodeAssociateRequest(association, RECEIVE_PDU_LIMIT));
  }

  /**
   * Accept the requested association with the results negotiate.ts set (A-ASSOCIATE-AC). We
   * advertise our own receive limit; what we send stays within the peer's.
   */
  sendAssociationAccept(): void {
    const association = this.#association!;
    this.#sendLimit = association.getMaxPduLength();
    this.#write(encodeAssociateAccept(association, RECEIVE_PDU_LIMIT));
  }

  /** Refuse the requested association (A-ASSOCIATE-RJ; defaults: permanent, user, no reason). */
  sendAssociationReject(result = 1, source = 1, reason = 1): void {
    this.#write(encodeAssociateReject(result, source, reason));
  }

  /** Ask to release the association (A-RELEASE-RQ); `handler.released` follows the answer. */
  sendAssociationReleaseRequest(): void {
    this.#write(encodeRelease(PDU.releaseRq));
  }

  /** Abort the association (A-ABORT). */
  sendAbort(source = 0, reason = 0): void {
    this.#write(encodeAbort(source, reason));
  }

  /** Queue requests; each is sent once the one before it has its final response. */
  sendRequests(requests: LibRequest | LibRequest[]): void {
    if (Array.isArray(requests)) { for (const request of requests) this.#queue.push({ request }); }
    else this.#queue.push({ request: requests });
    this.#sendNext();
  }

  /**
   * Queue one request whose responses go to `listener` directly instead of the request's
   * 'response' and 'done' events (dcmjs-dimse's event emitter costs about 10 µs a message);
   * `context`, when the caller knows it, is the accepted presentation context it goes on.
   */
  sendRequest(request: LibRequest, listener: RequestListener, context?: LibContext): void {
    this.#queue.push({ request, listener, context });
    this.#sendNext();
  }

  #responded(outgoing: Outgoing, response: LibResponse): void {
    if (outgoing.listener) outgoing.listener.response(response);
    else outgoing.request.raiseResponseEvent(response);
  }

  #done(outgoing: Outgoing): void {
    if (outgoing.listener) outgoing.listener.done();
    else outgoing.request.raiseDoneEvent();
  }

  /** Ask the peer to stop a C-FIND, C-GET or C-MOVE it is running for us (C-CANCEL-RQ). */
  sendCancel(request: CFindRequest | CGetRequest | CMoveRequest): void {
    const cancel = lib.requests.CCancelRequest.fromRequest(request);
    const context = this.#association?.getAcceptedPresentationContextFromRequest(cancel);
    if (context) this.#send(context, cancel);
  }

  /**
   * Socket wiring: bytes are split by PduReader and routed by MessageRouter; association PDUs,
   * messages and received C-STORE-RQs are processed strictly in order; an idle socket (no byte
   * for `pduTimeout`) is an error.
   */
  #wire(pduTimeout: number): void {
    const socket = this.socket;
    let queue = Promise.resolve();
    // Handlers run after the bytes that completed their PDU are consumed, one at a time.
    const later = (what: string, run: () => void) => {
      queue = queue.then(() => {
        if (!this.#open) return;
        try {
          run();
        } catch (err) {
          this.#fail(`cannot process ${what}: ${(err as Error).message}`);
        }
      });
    };
    const reader = new PduReader(
      new MessageRouter({
        pdu: (pdu) => later("a PDU", () => this.#pdu(pdu)),
        message: (contextId, command, dataset) =>
          later("a DIMSE message", () => this.#message(contextId, command, dataset)),
        decodeCommand: (bytes) =>
          decodeCommand(bytes) ??
            new lib.Dataset(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength))
              .getElements(),
        storeBuffer: (contextId, command) => this.#storeBuffer(contextId, command),
        store: (contextId, command, file) =>
          later("a C-STORE request", () => this.#received(contextId, command, file)),
      }),
    );
    socket.setTimeout(pduTimeout);
    socket.on("connect", () => this.handler.connected?.());
    socket.on("data", (data: Buffer) => {
      try {
        reader.push(data);
      } catch (err) {
        this.#fail(`connection error: ${(err as Error).message}`);
      }
    });
    socket.on("error", (err: Error) => this.#fail(`connection error: ${err.message}`));
    socket.on("timeout", () => this.#fail("connection timeout: no data from the peer"));
    socket.on("close", () => {
      this.#open = false;
      this.#receiving?.spool?.abort();
      this.#receiving = undefined;
      this.#spare = undefined;
      this.handler.closed?.();
    });
  }

  /** An error ends the association: the handler hears of it and the socket is closed. */
  #fail(message: string): void {
    if (!this.#open) return;
    this.#open = false;
    this.handler.error?.(new Error(message));
    this.socket.destroy();
  }

  #write(bytes: Uint8Array): void {
    if (this.#open) this.socket.write(bytes);
  }

  /** An association PDU. */
  #pdu(pdu: Uint8Array): void {
    switch (pdu[0]) {
      case PDU.associateRq: {
        if (this.#association) throw new Error("a second A-ASSOCIATE-RQ on one association");
        this.#association = decodeAssociateRequest(pdu);
        if (this.handler.associationRequested) {
          return this.handler.associationRequested(this.#association);
        }
        return this.sendAssociationReject();
      }
      case PDU.associateAc: {
        if (!this.#association) throw new Error("an A-ASSOCIATE-AC without a request");
        decodeAssociateAccept(pdu, this.#association);
        this.#sendLimit = this.#association.getMaxPduLength();
        return this.handler.associationAccepted?.(this.#association);
      }
      case PDU.associateRj:
        return this.handler.associationRejected?.(decodeAssociateReject(pdu));
      case PDU.releaseRq:
        this.#write(encodeRelease(PDU.releaseRp));
        return this.handler.released?.();
      case PDU.releaseRp:
        return this.handler.released?.();
      case PDU.abort: {
        const { source, reason } = decodeAbort(pdu);
        this.#open = false;
        this.handler.aborted?.(source, reason);
        this.socket.destroy();
        return;
      }
      default:
        throw new Error(`unknown PDU type ${pdu[0]}`);
    }
  }

  /** The accepted presentation context `contextId`; throws when there is none. */
  #context(contextId: number): LibContext {
    const known = this.#contexts.get(contextId);
    if (known !== undefined) return known;
    const context = this.#association?.getPresentationContexts().find((c) => c.id === contextId)
      ?.context;
    if (!context || context.getResult() !== lib.constants.PresentationContextResult.Accept) {
      throw new Error(`no accepted presentation context ${contextId}`);
    }
    // Contexts are settled once the association is: the answer does not change.
    this.#contexts.set(contextId, context);
    return context;
  }

  /** A whole message other than a received C-STORE-RQ: a response, or a request to serve. */
  #message(contextId: number, command: Record<string, unknown>, bytes?: Uint8Array): void {
    const context = this.#context(contextId);
    const field = Number(command.CommandField);
    const commandSet = new lib.Dataset(command, TS.implicitLE);
    const ts = context.getAcceptedTransferSyntaxUid() ?? TS.implicitLE;
    // Uncompressed Little Endian identifiers and matches stay bytes until read (datasetJson).
    const dataset = bytes &&
      (CONVERTIBLE.includes(ts)
        ? new RawDataset(bytes, ts)
        : new lib.Dataset(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), ts));
    if (field & 0x8000) return this.#response(field, commandSet, dataset);
    const reply: Reply = (responses) => {
      for (const rsp of Array.isArray(responses) ? responses : [responses]) {
        const held = field === C_FIND_RQ && isPending(rsp.getStatus());
        if (held && this.#held++ === 0) this.socket.cork();
        this.#send(context, rsp);
        if (this.#held > 0 && (!held || this.#held >= HOLD_PENDING)) {
          this.#held = 0;
          this.socket.uncork();
        }
      }
    };
    const h = this.handler;
    // Requests made without their (costly) constructor: the command set is the received one.
    const request = <R extends LibRequest>(Request: new () => R): R => {
      const r = newRequest(Request, commandSet);
      if (dataset) r.setDataset(dataset);
      return r;
    };
    switch (field) {
      case C_ECHO_RQ: {
        const rq = request(lib.requests.CEchoRequest);
        return h.echo ? h.echo(rq, reply) : reply(lib.responses.CEchoResponse.fromRequest(rq));
      }
      case C_FIND_RQ: {
        const rq = request(lib.requests.CFindRequest);
        return h.find ? h.find(rq, reply) : reply(lib.responses.CFindResponse.fromRequest(rq));
      }
      case C_GET_RQ: {
        const rq = request(lib.requests.CGetRequest);
        return h.get ? h.get(rq, reply) : reply(lib.responses.CGetResponse.fromRequest(rq));
      }
      case C_MOVE_RQ: {
        const rq = request(lib.requests.CMoveRequest);
        return h.move ? h.move(rq, reply) : reply(lib.responses.CMoveResponse.fromRequest(rq));
      }
      case C_CANCEL_RQ: {
        const rq = new lib.requests.CCancelRequest("", 0);
        rq.setCommandDataset(commandSet);
        return h.cancel?.(rq);
      }
      case C_STORE_RQ:
        throw new Error("a C-STORE-RQ without a dataset");
      default:
        return this.#unrecognized(contextId, command);
    }
  }

  /** A response: to the request awaiting it; its final one lets the next request go. */
  #response(field: number, commandSet: LibDataset, dataset: LibDataset | undefined): void {
    const make = RESPONSES[field];
    if (!make) throw new Error(`a response with command field 0x${field.toString(16)}`);
    const response = make();
    response.setCommandDataset(commandSet);
    if (dataset) response.setDataset(dataset);
    const current = this.#current;
    if (!current || current.request.getMessageId() !== response.getMessageIdBeingRespondedTo()) {
      return;
    }
    this.#responded(current, response);
    const status = response.getStatus();
    if (status === STATUS.pending || status === STATUS.pendingWarning) return;
    this.#current = undefined;
    this.#done(current);
    this.#sendNext();
  }

  /** Answer a request of a service we do not run: "unrecognized operation", no dataset. */
  #unrecognized(contextId: number, command: Record<string, unknown>): void {
    const answer = encodeCommand({
      AffectedSOPClassUID: command.AffectedSOPClassUID ?? command.RequestedSOPClassUID ?? "",
      CommandField: Number(command.CommandField) | 0x8000,
      MessageIDBeingRespondedTo: command.MessageID,
      CommandDataSetType: NO_DATASET,
      Status: UNRECOGNIZED_OPERATION,
    });
    if (!answer) throw new Error("cannot answer an unrecognized request");
    this.#write(pdvPdu(contextId, COMMAND | LAST, answer));
  }

  /** Send the next queued request when none is awaiting responses. */
  #sendNext(): void {
    while (this.#current === undefined && this.#queue.length > 0) {
      const outgoing = this.#queue.shift()!;
      const request = outgoing.request;
      const context = outgoing.context ??
        this.#association?.getAcceptedPresentationContextFromRequest(request);
      this.#messageId = (this.#messageId % 0xffff) + 1;
      request.setMessageId(this.#messageId);
      this.#current = outgoing;
      if (context && this.#send(context, request)) return;
      // Not sendable here (no context, a syntax it cannot be converted to): done, unanswered.
      this.#current = undefined;
      this.#done(outgoing);
    }
  }

  /**
   * Send a command and its dataset as P-DATA-TF PDUs: the command set encoded directly when it
   * holds only command elements (dcmjs otherwise), the dataset in fragments of the peer's maximum
   * PDU length that are views of its bytes, all in one corked write. False when the dataset
   * cannot be sent in the context's transfer syntax.
   */
  #send(context: LibContext, command: LibRequest | LibResponse): boolean {
    if (!this.#open) return false;
    const dataset = command.getDataset();
    let bytes: Uint8Array | undefined;
    if (dataset) {
      bytes = encodedIn(dataset, context.getAcceptedTransferSyntaxUid() ?? TS.implicitLE);
      if (!bytes) return false;
    }
    const commandSet = command.getCommandDataset();
    const encoded = encodeCommand(commandSet.getElements()) ??
      new Uint8Array(commandSet.getDenaturalizedCommandDataset());
    const contextId = context.getPresentationContextId();
    const limit = this.#sendLimit === 0 ? SEND_PDU_CAP : Math.min(this.#sendLimit, SEND_PDU_CAP);
    const socket = this.socket;
    socket.cork();
    try {
      socket.write(pdvPdu(contextId, COMMAND | LAST, encoded));
      if (bytes) {
        const fragment = limit - 6;
        let at = 0;
        do {
          const n = Math.min(fragment, bytes.byteLength - at);
          const last = at + n >= bytes.byteLength;
          socket.write(pdvHeader(contextId, last ? LAST : 0, n));
          if (n > 0) socket.write(bytes.subarray(at, at + n));
          at += n;
        } while (at < bytes.byteLength);
      }
    } finally {
      socket.uncork();
    }
    return true;
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
    let recycled = false;
    const reply: Reply = (responses) => {
      for (const rsp of Array.isArray(responses) ? responses : [responses]) {
        this.#send(context, rsp);
      }
      // The sender now reads and sends its next instance: prepare memory for it meanwhile (fresh
      // memory is faulted in now, not while the instance arrives).
      const size = this.#lastDatasetSize + HEADER_ROOM;
      if (size > SPARE_LIMIT || !this.#open) return;
      this.#spare = recycled ? new Uint8Array(bytes.buffer) : prefaulted(size);
    };
    const recycle = () => recycled = true;
    if (this.handler.store) return this.handler.store(request, reply, file.spool, recycle);
    file.spool?.abort();
    reply(lib.responses.CStoreResponse.fromRequest(request));
  }
}

/**
 * A dataset's bytes in transfer syntax `ts`: as they are when it is theirs, converted between the
 * uncompressed Little Endian syntaxes, undefined otherwise (compressed data is never transcoded).
 */
function encodedIn(dataset: LibDataset, ts: string): Uint8Array | undefined {
  const from = dataset.getTransferSyntaxUid();
  if (from !== ts) {
    if (!CONVERTIBLE.includes(from) || !CONVERTIBLE.includes(ts)) return undefined;
    if (dataset instanceof RawDataset) return writeDataset(readDataset(dataset.bytes, from), ts);
    dataset.setTransferSyntaxUid(ts);
  }
  // A view, not a copy (a RawDataset's bytes are the instance's own).
  const bytes = dataset.getDenaturalizedDataset();
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
