/**
 * Outgoing associations (SCU side): connect (TCP through TcpSocket, or node:tls), negotiate the proposed presentation
 * contexts, run requests one at a time (pending responses streamed to a callback), answer C-STORE
 * sub-operations of a C-GET, release or abort. Every failure is a DimseError with a kind.
 */
import net from "node:net";
import tls from "node:tls";
import { STATUS } from "../../dicom/mod.ts";
import { DimseConnection, type DimseSocket } from "./connection.ts";
import { TcpSocket } from "./tcp_socket.ts";
import {
  type CStoreRequest,
  lib,
  type LibAssociation,
  type LibContext,
  type LibRequest,
  type LibResponse,
} from "./dcmjs_dimse.ts";

/** Why an association or an operation failed. */
export type DimseErrorKind = "connect" | "rejected" | "aborted" | "timeout" | "protocol";

/** A failed association or operation. */
export class DimseError extends Error {
  readonly kind: DimseErrorKind;
  readonly details?: Record<string, unknown>;
  constructor(kind: DimseErrorKind, message: string, details?: Record<string, unknown>) {
    super(message);
    this.name = "DimseError";
    this.kind = kind;
    this.details = details;
  }
}

/** A presentation context to propose. */
export interface ProposedContext {
  abstractSyntax: string;
  transferSyntaxes: readonly string[];
  /** Propose the SCP role too (storage contexts of a C-GET). */
  scpRole?: boolean;
}

/** TLS material of an association (PEM text). */
export interface DimseTls {
  ca?: string;
  cert?: string;
  key?: string;
}

/**
 * What aborts an association or an operation: an `AbortSignal`, or anything with its `aborted`,
 * `reason` and abort listeners (the executor's abort hook of a backend call, which costs no
 * AbortController). Listeners are objects (`handleEvent`), which both accept.
 */
export interface AbortSource {
  readonly aborted: boolean;
  readonly reason: unknown;
  addEventListener(type: "abort", listener: { handleEvent(): void }): void;
  removeEventListener(type: "abort", listener: { handleEvent(): void }): void;
}

/** Where and how to associate. */
export interface ScuOptions {
  host: string;
  port: number;
  callingAet: string;
  calledAet: string;
  contexts: ProposedContext[];
  tls?: DimseTls;
  /** Aborts the association (timeout or client gone). */
  signal?: AbortSource;
}

const REJECT_REASONS: Record<string, string> = {
  "1:1": "no reason given",
  "1:2": "application context name not supported",
  "1:3": "calling AE title not recognized",
  "1:7": "called AE title not recognized",
  "2:1": "no reason given (ACSE)",
  "2:2": "protocol version not supported",
  "3:1": "temporary congestion",
  "3:2": "local limit exceeded",
};

/** Text of an A-ASSOCIATE-RJ source and reason. */
export function rejectText(source: number, reason: number): string {
  return REJECT_REASONS[`${source}:${reason}`] ?? `source ${source}, reason ${reason}`;
}

/** An established association to a remote AE. */
export class ScuAssociation {
  readonly #conn: DimseConnection;
  #signal?: AbortSource;
  /** What `watch` listens to: an abort of it aborts the association. */
  #watched: AbortSource | undefined;
  #failure: DimseError | undefined;
  /** Accepted contexts by abstract and transfer syntax (accepted). */
  readonly #accepted = new Map<string, LibContext | undefined>();
  /** Accepted contexts by SOP class and dataset syntax (#contextFor). */
  readonly #contexts = new Map<string, LibContext | undefined>();
  #onFailure = new Set<(err: DimseError) => void>();
  #closed: Promise<void>;
  /** Answers C-STORE sub-operations (C-GET); the returned status is sent back. */
  onStore: ((request: CStoreRequest) => Promise<number>) | undefined;

  private constructor(conn: DimseConnection, signal?: AbortSource) {
    this.#conn = conn;
    this.#signal = signal;
    this.#closed = new Promise((resolve) => {
      const prev = conn.handler.closed;
      conn.handler.closed = () => {
        prev?.();
        this.#fail(new DimseError("protocol", "the association was closed by the peer"));
        resolve();
      };
    });
    conn.handler.error = (err) => this.#fail(new DimseError("protocol", err.message));
    conn.handler.aborted = (source, reason) =>
      this.#fail(
        new DimseError(
          "aborted",
          `the peer aborted the association (A-ABORT source ${source}, reason ${reason})`,
        ),
      );
    conn.handler.store = (request, reply) => {
      const respond = (status: number) => {
        try {
          const res = lib.responses.CStoreResponse.fromRequest(request);
          res.setStatus(status);
          reply(res);
        } catch (err) {
          this.#fail(
            new DimseError("protocol", `cannot answer a C-STORE: ${(err as Error).message}`),
          );
        }
      };
      if (!this.onStore) return respond(STATUS.sopClassNotSupported);
      this.onStore(request).then(respond, () => respond(STATUS.outOfResources));
    };
  }

  /** Connect and negotiate; resolves once the association is accepted. */
  static open(opts: ScuOptions): Promise<ScuAssociation> {
    if (opts.signal?.aborted) return Promise.reject(abortError(opts.signal));
    const socket: DimseSocket = opts.tls
      ? tls.connect({
        host: opts.host,
        port: opts.port,
        ca: opts.tls.ca,
        cert: opts.tls.cert,
        key: opts.tls.key,
        servername: net.isIP(opts.host) ? undefined : opts.host,
      })
      : TcpSocket.connect(opts.host, opts.port);
    socket.setNoDelay(true);
    const conn = new DimseConnection(socket);
    const association = new lib.association.Association(opts.callingAet, opts.calledAet);
    for (const c of opts.contexts) {
      const id = association.addPresentationContext(c.abstractSyntax);
      for (const ts of c.transferSyntaxes) {
        association.addTransferSyntaxToPresentationContext(id, ts);
      }
      if (c.scpRole) {
        const pc = association.getPresentationContext(id);
        pc.setUserRole(true);
        pc.setProviderRole(true);
      }
    }
    return new Promise((resolve, reject) => {
      const onAbort = {
        handleEvent: () => {
          settle();
          conn.sendAbort();
          socket.destroy();
          reject(abortError(opts.signal!));
        },
      };
      opts.signal?.addEventListener("abort", onAbort);
      const settle = () => opts.signal?.removeEventListener("abort", onAbort);
      conn.handler = {
        connected: () => conn.sendAssociationRequest(association),
        associationAccepted: () => {
          settle();
          resolve(new ScuAssociation(conn, opts.signal));
        },
        associationRejected: (r) => {
          settle();
          socket.destroy();
          reject(
            new DimseError(
              "rejected",
              `${opts.calledAet} at ${opts.host}:${opts.port} rejected the association: ${
                rejectText(r.source, r.reason)
              }`,
              { result: r.result, source: r.source, reason: r.reason },
            ),
          );
        },
        error: (err) => {
          settle();
          socket.destroy();
          reject(
            new DimseError(
              "connect",
              `cannot associate with ${opts.calledAet} at ${opts.host}:${opts.port}: ${err.message}`,
            ),
          );
        },
        closed: () => {
          settle();
          reject(
            new DimseError(
              "connect",
              `${opts.host}:${opts.port} closed the connection during association negotiation`,
            ),
          );
        },
      };
    });
  }

  /** Resolves once the connection is closed (released, aborted, or closed by the peer). */
  get closed(): Promise<void> {
    return this.#closed;
  }

  /** True until the association fails, is released, aborted or closed by the peer. */
  get usable(): boolean {
    return this.#failure === undefined;
  }

  /**
   * Forget the signal the association was opened with, so that a later failure is not blamed on
   * that request's timeout or client (an association kept for reuse outlives its first request).
   */
  detach(): void {
    this.#signal = undefined;
  }

  /** The negotiated association. */
  get association(): LibAssociation {
    return this.#conn.negotiated!;
  }

  /** The accepted presentation context for an abstract syntax, preferring `transferSyntax`. */
  accepted(abstractSyntax: string, transferSyntax?: string): LibContext | undefined {
    // Settled with the association: looked up once per syntax pair (one per C-FIND, C-STORE).
    const key = `${abstractSyntax}|${transferSyntax ?? ""}`;
    if (this.#accepted.has(key)) return this.#accepted.get(key);
    const found = this.#findAccepted(abstractSyntax, transferSyntax);
    if (this.#accepted.size < 256) this.#accepted.set(key, found);
    return found;
  }

  #findAccepted(abstractSyntax: string, transferSyntax?: string): LibContext | undefined {
    let found: LibContext | undefined;
    for (const { id } of this.association.getPresentationContexts()) {
      const pc = this.association.getPresentationContext(id);
      if (pc.getAbstractSyntaxUid() !== abstractSyntax) continue;
      if (pc.getResult() !== lib.constants.PresentationContextResult.Accept) continue;
      if (transferSyntax && pc.getAcceptedTransferSyntaxUid() === transferSyntax) return pc;
      found ??= pc;
    }
    return found;
  }

  /**
   * Send a request; pending responses go to `onPending`, the final one resolves. Rejects with a
   * DimseError when the association fails first (abort, close, timeout).
   */
  request(request: LibRequest, onPending?: (res: LibResponse) => void): Promise<LibResponse> {
    if (this.#failure) return Promise.reject(this.#failure);
    const context = this.#contextFor(request);
    if (!context) {
      return Promise.reject(
        new DimseError(
          "rejected",
          `the peer accepted no presentation context for ${request.getAffectedSopClassUid()}`,
        ),
      );
    }
    return new Promise((resolve, reject) => {
      const onFail = (err: DimseError) => reject(err);
      this.#onFailure.add(onFail);
      let answered = false;
      this.#conn.sendRequest(request, {
        response: (res) => {
          const status = res.getStatus();
          if (status === STATUS.pending || status === STATUS.pendingWarning) {
            onPending?.(res);
            return;
          }
          answered = true;
          this.#onFailure.delete(onFail);
          resolve(res);
        },
        // A request that could not be sent (a dataset it cannot be converted to the accepted
        // syntax) ends without any response: fail it rather than wait for the timeout.
        done: () => {
          if (answered) return;
          this.#onFailure.delete(onFail);
          reject(new DimseError("protocol", "the request could not be sent on the association"));
        },
      }, context);
    });
  }

  /**
   * The accepted context a request goes on (dcmjs-dimse's choice: its SOP class, preferring its
   * dataset's transfer syntax), looked up once per SOP class and syntax: they are settled.
   */
  #contextFor(request: LibRequest): LibContext | undefined {
    // C-services name their SOP class as the affected one (N-services may name a meta class).
    if (!C_SERVICES.has(request.getCommandFieldType())) {
      return this.association.getAcceptedPresentationContextFromRequest(request);
    }
    const key = `${request.getAffectedSopClassUid()}|${
      request.getDataset()?.getTransferSyntaxUid() ?? ""
    }`;
    if (this.#contexts.has(key)) return this.#contexts.get(key);
    const context = this.association.getAcceptedPresentationContextFromRequest(request);
    if (this.#contexts.size < 256) this.#contexts.set(key, context);
    return context;
  }

  /** Ask the peer to cancel a running C-FIND, C-GET or C-MOVE. */
  cancel(request: LibRequest): void {
    if (!this.#failure) this.#conn.sendCancel(request as never);
  }

  /** Release the association (A-RELEASE) and close the socket; never throws. */
  async release(): Promise<void> {
    if (!this.#failure) {
      // The peer answers A-RELEASE-RP (then we close) or closes the connection itself.
      const released = new Promise<void>((resolve) => this.#conn.handler.released = resolve);
      this.#conn.sendAssociationReleaseRequest();
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timeout = new Promise<void>((resolve) => timer = setTimeout(resolve, 5_000));
      await Promise.race([released, this.#closed, timeout]);
      clearTimeout(timer);
      this.#failure ??= new DimseError("protocol", "the association was released");
    }
    this.#conn.socket.destroy();
  }

  /** Abort the association at once. */
  abort(): void {
    if (!this.#failure) {
      this.#conn.sendAbort();
      this.#fail(new DimseError("aborted", "the association was aborted"));
    }
    this.#conn.socket.destroy();
  }

  #fail(err: DimseError): void {
    if (this.#failure) return;
    this.#failure = this.#signal?.aborted ? abortError(this.#signal) : err;
    for (const f of this.#onFailure) f(this.#failure);
    this.#onFailure.clear();
  }

  /**
   * Reject pending requests and abort the association when `signal` aborts, until `unwatch`
   * (one source at a time; the association is its listener: nothing allocated per operation).
   */
  watch(signal: AbortSource | undefined): void {
    if (!signal) return;
    this.#watched = signal;
    if (signal.aborted) return this.handleEvent();
    signal.addEventListener("abort", this);
  }

  /** Stop watching the source given to `watch`. */
  unwatch(): void {
    const signal = this.#watched;
    this.#watched = undefined;
    signal?.removeEventListener("abort", this);
  }

  /** The watched source aborted (see `watch`). */
  handleEvent(): void {
    const signal = this.#watched;
    if (!signal) return;
    this.#watched = undefined;
    this.#fail(abortError(signal));
    this.abort();
  }
}

/** Command fields of the C-service requests (PS3.7 E.1). */
const C_SERVICES = new Set([0x0001, 0x0010, 0x0020, 0x0021, 0x0030]);

function abortError(signal: AbortSource): DimseError {
  const reason = signal.reason as { name?: string } | undefined;
  return reason?.name === "TimeoutError"
    ? new DimseError("timeout", "the DIMSE operation timed out")
    : new DimseError("aborted", "the DIMSE operation was aborted (client gone)");
}
