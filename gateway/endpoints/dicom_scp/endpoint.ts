/**
 * The `dicom_scp` endpoint: the association policy (called AE, allowed calling AEs, enabled
 * services) and the DIMSE operations of one association, each run through the pipeline. The
 * listener (adapters/dimse) hands it connections; the gateway keeps the listener across config
 * generations and asks the current one's endpoint to serve each new association.
 */
import {
  type AcceptPolicy,
  type CFindRequest,
  type CGetRequest,
  type CMoveRequest,
  type CStoreRequest,
  datasetJson,
  type DimseConnection,
  type DimseService,
  type DimseTls,
  type DimseTlsServer,
  holdsElement,
  JsonDataset,
  lazyDatasetJson,
  lib,
  type LibResponse,
  negotiate,
  type RawDataset,
  type Reply,
  untouched,
} from "../../adapters/dimse/mod.ts";
import type { DicomPeerConfig, EndpointConfig } from "../../../shared/gateway_config/mod.ts";
import { AddressRanges } from "../../../shared/net/mod.ts";
import { type DicomJson, parseStatus, STATUS, statusKind, writeP10 } from "../../dicom/mod.ts";
import { Body, type ResponseEnvelope } from "../../envelope.ts";
import { GatewayError, toGatewayError } from "../../errors.ts";
import {
  type BuiltPipeline,
  type ExecutorDeps,
  RequestRecord,
  runPipeline,
} from "../../pipeline/mod.ts";
import {
  dimseEnvelope,
  identifierBody,
  instanceMetadata,
  levelElement,
  levelMetadata,
  type Peer,
} from "./envelope.ts";
import {
  type Counts,
  finalStatus,
  getSubOperations,
  moveSubOperations,
  responseInstances,
} from "./retrieve.ts";
import { ReceivedInstanceBody } from "./instance_body.ts";
import { listenerKeyOf } from "./listener_key.ts";
import { releasesBodies } from "./recycle.ts";
import { comment, failureStatus } from "./status_map.ts";
import { InstanceStore, type SpooledInstance } from "./storage.ts";
import { sweepOnce } from "../../backends/storage/mod.ts";

/** Options of a dicom_scp endpoint (validated by the config schema). */
export interface ScpOptions {
  local_aet: string;
  bind_addr: string;
  port: number;
  enable_echo: boolean;
  enable_find: boolean;
  enable_move: boolean;
  enable_get: boolean;
  enable_store: boolean;
  storage_dir?: string;
  allowed_calling_aets?: string[];
  /** Per calling AE: the services it may use and where it may C-MOVE to. */
  peers?: Record<string, { services: DimseService[]; move_destinations: string[] }>;
  tls_cert_path?: string;
  tls_key_path?: string;
  tls_client_ca_path?: string;
  /** Addresses and CIDR ranges served; absent: any. */
  allowed_source_addresses?: string[];
  /** Validation's opt-out of peer authentication beyond loopback (nothing to do at run time). */
  allow_unauthenticated: boolean;
}

/** Keeps a config generation alive while its operations run. */
export interface Tracker {
  acquire(): void;
  release(): void;
}

/** A DIMSE endpoint bound to its pipeline. */
export class DicomScpEndpoint {
  readonly config: EndpointConfig;
  readonly pipeline: BuiltPipeline;
  readonly options: ScpOptions;
  readonly key: string;
  /** DICOM TLS material of the listener (read at build); absent: plain TCP. */
  readonly tls: DimseTlsServer | undefined;
  readonly policy: AcceptPolicy;
  readonly #peers: Record<string, DicomPeerConfig>;
  /** DICOM TLS material of the `[dicom.peers]` reached over TLS, by AE title. */
  readonly #peerTls: ReadonlyMap<string, DimseTls>;
  readonly #store: InstanceStore | undefined;
  readonly #sources: AddressRanges | undefined;
  /** Whether a received instance's memory may be reused once its pipeline finished. */
  readonly #recyclable: boolean;
  #deps: ExecutorDeps | undefined;
  #tracker: Tracker | undefined;

  constructor(
    config: EndpointConfig,
    pipeline: BuiltPipeline,
    peers: Record<string, DicomPeerConfig>,
    baseDir: string,
    tls?: DimseTlsServer,
    peerTls: ReadonlyMap<string, DimseTls> = new Map(),
  ) {
    this.config = config;
    this.tls = tls;
    this.#peerTls = peerTls;
    this.pipeline = pipeline;
    this.options = config.options as unknown as ScpOptions;
    this.key = listenerKeyOf(config.options);
    this.#peers = peers;
    const o = this.options;
    const services = new Set<DimseService>();
    if (o.enable_echo) services.add("echo");
    if (o.enable_find) services.add("find");
    if (o.enable_get) services.add("get");
    if (o.enable_move) services.add("move");
    if (o.enable_store) services.add("store");
    this.policy = {
      calledAet: o.local_aet,
      allowedCallingAets: o.peers ? Object.keys(o.peers) : o.allowed_calling_aets,
      services,
    };
    this.#recyclable = releasesBodies(pipeline);
    this.#sources = o.allowed_source_addresses
      ? new AddressRanges(o.allowed_source_addresses)
      : undefined;
    const dir = o.storage_dir;
    this.#store = dir
      ? new InstanceStore(dir.startsWith("/") ? dir : `${baseDir}/${dir}`)
      : undefined;
  }

  /** Attach the generation's executor dependencies and in-flight tracker. */
  attach(deps: ExecutorDeps, tracker: Tracker): void {
    this.#deps = deps;
    this.#tracker = tracker;
    // Temporary files of C-STOREs cut off by an earlier crash are removed once per process.
    if (this.#store) sweepOnce(this.#store.dir, deps.logger);
  }

  /**
   * What the calling AE may do: with `peers`, its own services among those enabled (a context of
   * any other service is rejected at negotiation); else the endpoint's services.
   */
  #policyFor(callingAet: string): AcceptPolicy {
    const own = this.options.peers?.[callingAet];
    if (!own) return this.policy;
    const allowed = new Set(own.services);
    return {
      ...this.policy,
      services: new Set([...this.policy.services].filter((s) => allowed.has(s))),
    };
  }

  /** Serve one association. */
  /** Whether a connection from `remoteAddr` may be served (`allowed_source_addresses`). */
  acceptsFrom(remoteAddr: string | undefined): boolean {
    return this.#sources === undefined ||
      (remoteAddr !== undefined && this.#sources.has(remoteAddr));
  }

  serve(conn: DimseConnection, remoteAddr?: string): void {
    const running = new Map<number, AbortController>();
    let peer: Peer = { callingAet: "", calledAet: "", remoteAddr };
    const log = this.#deps!.logger;
    // An operation that fails outside the pipeline (a broken association, an unencodable
    // answer) is logged and the association dropped; it must never become an unhandled rejection.
    const guard = (work: Promise<void>) => {
      work.catch((err: Error) => {
        log.error("DIMSE operation aborted", { endpoint: this.config.name, error: err.message });
        conn.socket.destroy();
      });
    };
    conn.handler = {
      associationRequested: (association) => {
        peer = {
          callingAet: association.getCallingAeTitle().trim(),
          calledAet: association.getCalledAeTitle().trim(),
          remoteAddr,
        };
        const rejection = negotiate(association, this.#policyFor(peer.callingAet));
        if (rejection) {
          log.warn("DIMSE association rejected", {
            endpoint: this.config.name,
            calling_aet: peer.callingAet,
            reason: rejection.why,
          });
          this.#deps!.metrics.errorCode("dicom_association_rejected");
          conn.sendAssociationReject(rejection.result, rejection.source, rejection.reason);
          return;
        }
        conn.sendAssociationAccept();
      },
      echo: (req, reply) =>
        guard(
          this.#operation("C-ECHO", peer, {}, Body.empty(), req.getMessageId(), running)
            .then(async ({ status, error, report }) => {
              const sent = await report(status);
              const res = lib.responses.CEchoResponse.fromRequest(req);
              res.setStatus(sent);
              const why = sent === status ? error : AUDIT_UNAVAILABLE;
              if (why) res.setErrorComment(comment(why));
              reply(res);
            }),
        ),
      find: (req, reply) => guard(this.#find(conn, req, reply, peer, running)),
      get: (req, reply) => guard(this.#get(conn, req, reply, peer, running)),
      move: (req, reply) => guard(this.#move(req, reply, peer, running)),
      storeSpool: this.#store ? (_cls, sop) => this.#store!.spool(sop) : undefined,
      store: (req, reply, spool, recycle) => {
        // Storage contexts also serve C-GET sub-operations: a caller allowed to C-GET but not
        // to store is refused here, per request.
        const own = this.options.peers?.[peer.callingAet];
        if ((own && !own.services.includes("store")) || !this.policy.services.has("store")) {
          spool?.abort();
          const res = lib.responses.CStoreResponse.fromRequest(req);
          res.setStatus(STATUS.notAuthorized);
          const why = `${peer.callingAet} may not store here`;
          res.setErrorComment(comment(why));
          guard(
            this.#refused("C-STORE", peer, {
              dicom_sop_class: req.getAffectedSopClassUid(),
              dicom_instance_uid: req.getAffectedSopInstanceUid(),
            }, why).then(() => reply(res)),
          );
          return;
        }
        guard(
          this.#storeInstance(req, reply, peer, running, {
            spool: spool as SpooledInstance | undefined,
            recycle: this.#recyclable ? recycle : undefined,
          }),
        );
      },
      cancel: (req) => running.get(req.getMessageIdBeingRespondedTo())?.abort(),
      closed: () => {
        for (const c of running.values()) c.abort();
      },
    };
  }

  /**
   * An operation refused before the pipeline by the `peers` policy (0124H is sent once this
   * resolves): logged, counted as a 403 `dimse_not_authorized` and audited like any other
   * operation, the refusal waiting for its record like any answer (sent even if it was not kept:
   * nothing was done).
   */
  async #refused(
    op: string,
    peer: Peer,
    extra: Record<string, string>,
    why: string,
  ): Promise<void> {
    const deps = this.#deps!;
    const env = dimseEnvelope(
      this.config.name,
      op,
      peer,
      extra,
      Body.empty(),
      new AbortController().signal,
    );
    const record = new RequestRecord(deps, this.pipeline.name, env.id);
    record.envelope = env;
    record.dimseStatus = STATUS.notAuthorized;
    record.failed(new GatewayError(403, "dimse_not_authorized", why), {
      endpoint: this.config.name,
      operation: op,
      calling_aet: peer.callingAet,
    }, {
      message: `DIMSE ${op} refused: not authorized for the caller`,
      level: "warn",
      logged: true,
    });
    await record.finished(403, "dimse", {
      endpoint: this.config.name,
      operation: op,
      calling_aet: peer.callingAet,
      status: "0x0124",
    })?.catch(() => {});
  }

  /**
   * Run one operation through the pipeline; failures become a status. The caller then calls
   * `report` with the final status it means to send (which may differ from the pipeline's: a
   * failed write to storage_dir is Out Of Resources) and sends what `report` resolves with: that
   * status once the operation's audit record is kept (with `durability = "sync"`, written and
   * fdatasync'ed), or Out Of Resources when it was not, so that no acknowledgement goes out
   * unrecorded and the log line and the metrics say what the peer received.
   */
  async #operation(
    op: string,
    peer: Peer,
    extra: Record<string, string>,
    body: Body,
    messageId: number,
    running: Map<number, AbortController>,
    after?: (res: ResponseEnvelope, signal: AbortSignal) => Promise<number>,
  ): Promise<OperationOutcome> {
    const deps = this.#deps!;
    const controller = new AbortController();
    running.set(messageId, controller);
    this.#tracker?.acquire();
    const env = dimseEnvelope(
      this.config.name,
      op,
      peer,
      extra,
      body,
      controller.signal,
      messageId,
    );
    const record = new RequestRecord(deps, this.pipeline.name, env.id);
    record.envelope = env;
    let outcome: Omit<OperationOutcome, "report">;
    try {
      const res = await runPipeline(this.pipeline, env, deps);
      if (res.status >= 400) {
        const text = await res.body.text().catch(() => "");
        outcome = {
          status: STATUS.unableToProcess,
          error: `pipeline answered ${res.status}: ${text}`,
          cancelled: false,
        };
      } else {
        const status = after
          ? await after(res, controller.signal)
          : statedStatus(res) ?? STATUS.success;
        outcome = { status, res, cancelled: controller.signal.aborted };
      }
    } catch (err) {
      const g = toGatewayError(err);
      record.failed(g, { endpoint: this.config.name, operation: op }, {
        message: "DIMSE operation failed",
        level: "warn",
        logged: !controller.signal.aborted,
      });
      outcome = controller.signal.aborted
        ? { status: STATUS.cancel, cancelled: true }
        : { status: failureStatus(op, g), error: g.message, cancelled: false };
    } finally {
      running.delete(messageId);
      this.#tracker?.release();
    }
    // The DIMSE status to send ends the record (metrics as 200 or 502, and the log line).
    const report = async (sent: number): Promise<number> => {
      record.dimseStatus = sent;
      const committed = record.finished(statusKind(sent) === "failure" ? 502 : 200, "dimse", {
        endpoint: this.config.name,
        operation: op,
        calling_aet: peer.callingAet,
        status: statusText(sent),
      });
      if (!committed) return sent;
      try {
        await committed;
        return sent;
      } catch (err) {
        return failureStatus(op, toGatewayError(err));
      }
    };
    // The outcome object itself (no copy of it per operation).
    (outcome as OperationOutcome).report = report;
    return outcome as OperationOutcome;
  }

  async #find(
    conn: DimseConnection,
    req: CFindRequest,
    reply: Reply,
    peer: Peer,
    running: Map<number, AbortController>,
  ): Promise<void> {
    const dataset = req.getDataset();
    // Decoded only if the pipeline looks at it: untouched, the PACS gets the caller's bytes.
    const identifier = lazyDatasetJson(dataset);
    // The identifier came in the context's syntax, which the matches go back in.
    const ts = dataset?.getTransferSyntaxUid() ??
      conn.negotiated?.getAcceptedPresentationContextFromRequest(req)
        ?.getAcceptedTransferSyntaxUid() ??
      "1.2.840.10008.1.2";
    const respond = (status: number, dataset?: DicomJson, error?: string) => {
      const res = lib.responses.CFindResponse.fromRequest(req);
      res.setAffectedSopClassUid(req.getAffectedSopClassUid());
      res.setStatus(status);
      if (dataset) res.setDataset(new JsonDataset(dataset, ts));
      if (error) res.setErrorComment(comment(error));
      reply(res);
    };
    const level = levelElement(identifier);
    const out = await this.#operation(
      "C-FIND",
      peer,
      levelMetadata(identifier, { dicom_sop_class: req.getAffectedSopClassUid() }, level),
      identifierBody(identifier),
      req.getMessageId(),
      running,
      async (res, signal) => {
        const data = await res.body.data();
        const matches = Array.isArray(data) ? data : isDicomJson(data) ? [data] : undefined;
        if (!matches) {
          throw new GatewayError(
            502,
            "invalid_pipeline_answer",
            "the pipeline answered no DICOM JSON matches",
          );
        }
        let sent = 0;
        for (const m of matches as DicomJson[]) {
          if (signal.aborted) return STATUS.cancel;
          respond(STATUS.pending, withLevel(m, level));
          // Let a C-CANCEL in between be read.
          if (++sent % 64 === 0) await new Promise((r) => setTimeout(r, 0));
        }
        return signal.aborted ? STATUS.cancel : statedStatus(res) ?? STATUS.success;
      },
    );
    const status = out.cancelled ? STATUS.cancel : out.status;
    const sent = await out.report(status);
    respond(sent, undefined, sent === status ? out.error : AUDIT_UNAVAILABLE);
  }

  async #get(
    conn: DimseConnection,
    req: CGetRequest,
    reply: Reply,
    peer: Peer,
    running: Map<number, AbortController>,
  ): Promise<void> {
    const identifier = datasetJson(req.getDataset());
    const respond = retrieveResponder(
      req,
      reply,
      () => lib.responses.CGetResponse.fromRequest(req),
    );
    let counts: Counts | undefined;
    const out = await this.#operation(
      "C-GET",
      peer,
      { dicom_sop_class: req.getAffectedSopClassUid(), ...levelMetadata(identifier) },
      identifierBody(identifier),
      req.getMessageId(),
      running,
      async (res, signal) => {
        const files = await responseInstances(res);
        counts = await getSubOperations(conn, files, () => signal.aborted, (c) => {
          if (c.remaining > 0) respond(STATUS.pending, c);
        });
        return finalStatus(counts, signal.aborted);
      },
    );
    const sent = await out.report(out.status);
    respond(sent, counts, sent === out.status ? out.error : AUDIT_UNAVAILABLE);
  }

  async #move(
    req: CMoveRequest,
    reply: Reply,
    peer: Peer,
    running: Map<number, AbortController>,
  ): Promise<void> {
    const identifier = datasetJson(req.getDataset());
    const destination = String(req.getCommandDataset().getElement("MoveDestination") ?? "").trim();
    const respond = retrieveResponder(
      req,
      reply,
      () => lib.responses.CMoveResponse.fromRequest(req),
    );
    const allowedDestinations = this.options.peers?.[peer.callingAet]?.move_destinations;
    if (allowedDestinations && !allowedDestinations.includes(destination)) {
      // PS3.7 C.5: 0124H "Refused: Not Authorized".
      await this.#refused("C-MOVE", peer, {
        dicom_sop_class: req.getAffectedSopClassUid(),
        dicom_move_destination: destination,
      }, `${peer.callingAet} may not move to ${destination}`);
      respond(
        STATUS.notAuthorized,
        undefined,
        `${peer.callingAet} may not move to ${destination}`,
      );
      return;
    }
    const target = this.#peers[destination];
    if (!target) {
      respond(STATUS.moveDestinationUnknown, undefined, `unknown move destination ${destination}`);
      return;
    }
    let counts: Counts | undefined;
    const out = await this.#operation(
      "C-MOVE",
      peer,
      {
        dicom_sop_class: req.getAffectedSopClassUid(),
        dicom_move_destination: destination,
        ...levelMetadata(identifier),
      },
      identifierBody(identifier),
      req.getMessageId(),
      running,
      async (res, signal) => {
        const files = await responseInstances(res);
        counts = await moveSubOperations(
          {
            aet: destination,
            host: target.host,
            port: target.port,
            callingAet: this.options.local_aet,
            tls: this.#peerTls.get(destination),
          },
          { aet: peer.callingAet, messageId: req.getMessageId() },
          files,
          () => signal.aborted,
          (c) => {
            if (c.remaining > 0) respond(STATUS.pending, c);
          },
        );
        return finalStatus(counts, signal.aborted);
      },
    );
    const sent = await out.report(out.status);
    respond(sent, counts, sent === out.status ? out.error : AUDIT_UNAVAILABLE);
  }

  async #storeInstance(
    req: CStoreRequest,
    reply: Reply,
    peer: Peer,
    running: Map<number, AbortController>,
    received: { spool?: SpooledInstance; recycle?: () => void },
  ): Promise<void> {
    const { spool, recycle } = received;
    const dataset = req.getDataset() as RawDataset;
    const ts = dataset.getTransferSyntaxUid();
    const sopInstanceUid = req.getAffectedSopInstanceUid();
    // Received datasets come assembled as a Part 10 file already (adapters/dimse/connection.ts).
    const file = dataset.file ?? writeP10(
      { transferSyntax: ts, sopClassUid: req.getAffectedSopClassUid(), sopInstanceUid },
      dataset.bytes,
    );
    const meta: Record<string, string> = {
      dicom_sop_class: req.getAffectedSopClassUid(),
      dicom_transfer_syntax: ts,
      ...instanceMetadata(dataset),
      dicom_instance_uid: sopInstanceUid,
    };
    const study = meta.dicom_study_uid ?? "";
    const write = spool
      ? this.#store!.commit(spool, study, sopInstanceUid)
      : this.#store?.write(study, sopInstanceUid, file);
    const [out, written] = await Promise.all([
      this.#operation(
        "C-STORE",
        peer,
        meta,
        new ReceivedInstanceBody(file, dataset),
        req.getMessageId(),
        running,
      ),
      write?.then(() => undefined, (err: Error) => err),
    ]);
    if (recycle) {
      // A C-STORE-RSP carries only a status, so the answer goes unread; one built on demand (as
      // `echo`'s) must never be built once the bytes it would read hold the next instance.
      await dropBody(out.res);
      // The pipeline and the write are done: the bytes may take the next instance (recycle.ts).
      recycle();
    }
    const res = lib.responses.CStoreResponse.fromRequest(req);
    const status = written ? STATUS.outOfResources : out.status;
    // The C-STORE response is the acknowledgement: it waits for the operation's audit record.
    const sent = await out.report(status);
    res.setStatus(sent);
    if (sent !== status) {
      res.setErrorComment(AUDIT_UNAVAILABLE);
    } else if (written) {
      this.#deps!.logger.error("storing a received instance failed", { error: written.message });
      res.setErrorComment(comment(`cannot write to storage_dir: ${written.message}`));
    } else if (out.error) {
      res.setErrorComment(comment(out.error));
    }
    reply(res);
  }
}

/** The Error Comment of a final response whose operation's audit record was not kept. */
const AUDIT_UNAVAILABLE = "audit trail unavailable";

/** What one operation's pipeline run came to. */
interface OperationOutcome {
  /** The status the pipeline's outcome maps to. */
  status: number;
  /** Why it failed (sent as the Error Comment). */
  error?: string;
  res?: ResponseEnvelope;
  cancelled: boolean;
  /**
   * Ends the operation's record with the status about to be sent (audit, log, metrics); resolves
   * with the status to send (Out Of Resources when the audit record was not kept).
   */
  report(sent: number): Promise<number>;
}

/** The response setters C-GET and C-MOVE responses share. */
interface RetrieveResponse extends LibResponse {
  setAffectedSopClassUid(uid: string): void;
  setRemaining(n: number): void;
  setCompleted(n: number): void;
  setFailures(n: number): void;
  setWarnings(n: number): void;
  setErrorComment(text: string): void;
}

/**
 * Builds C-GET/C-MOVE responses with the sub-operation counts (remaining only on pending and
 * cancel, PS3.7 C.4.2/C.4.3) and sends them.
 */
function retrieveResponder(
  req: CGetRequest | CMoveRequest,
  reply: Reply,
  create: () => RetrieveResponse,
): (status: number, c?: Counts, error?: string) => void {
  return (status, c, error) => {
    const res = create();
    res.setAffectedSopClassUid(req.getAffectedSopClassUid());
    res.setStatus(status);
    if (c) {
      if (status === STATUS.pending || status === STATUS.cancel) res.setRemaining(c.remaining);
      res.setCompleted(c.completed);
      res.setFailures(c.failed);
      res.setWarnings(c.warning);
    }
    if (error) res.setErrorComment(comment(error));
    reply(res);
  };
}

/** Cancels an answer's body stream, if it has one, unread. */
async function dropBody(res: ResponseEnvelope | undefined): Promise<void> {
  const body = res?.body.forwardable();
  if (body instanceof ReadableStream) await body.cancel().catch(() => {});
}

/** A status as the record gives it (`0xff00`), made once each. */
const STATUS_TEXT = new Map<number, string>();

function statusText(status: number): string {
  let text = STATUS_TEXT.get(status);
  if (text === undefined) {
    text = `0x${status.toString(16).padStart(4, "0")}`;
    if (STATUS_TEXT.size < 256) STATUS_TEXT.set(status, text);
  }
  return text;
}

/** Statuses as backends write them (`0xFF00`), parsed once each (a regex costs ~0.5 µs). */
const STATUSES = new Map<string, number | undefined>();

/** The DIMSE status an answer states (`x-dicom-status`), if any. */
function statedStatus(res: ResponseEnvelope): number | undefined {
  const text = fieldOf(res, "x-dicom-status");
  if (text === null) return undefined;
  if (STATUSES.has(text)) return STATUSES.get(text);
  const status = parseStatus(text);
  if (STATUSES.size < 256) STATUSES.set(text, status);
  return status;
}

/**
 * A response's field `name` (lower-case) as `headers.get` gives it, read from the fields a backend
 * gave when nobody made Headers of them yet (that copy costs about 2 µs an operation).
 */
function fieldOf(res: ResponseEnvelope, name: string): string | null {
  const fields = res.receivedFields;
  if (fields === undefined) return res.headers.get(name);
  let found: string | null = null;
  for (let i = 0; i < fields.length; i += 2) {
    // Backends name their fields in lower case: compared as they are first (no new string).
    const field = fields[i];
    if (field !== name && field.toLowerCase() !== name) continue;
    const value = fields[i + 1].trim();
    found = found === null ? value : `${found}, ${value}`;
  }
  return found;
}

/** Query/Retrieve Level (0008,0052). */
const LEVEL_TAG = 0x00080052;

/**
 * A match with the identifier's Query/Retrieve Level when it has none. An untouched match of
 * received bytes (adapters/dimse/lazy_json.ts) that holds one is not looked at: it goes out as
 * it came.
 */
function withLevel(match: DicomJson, level: DicomJson[string] | undefined): DicomJson {
  if (!level) return match;
  const raw = untouched(match);
  if (raw !== undefined && holdsElement(raw.bytes, raw.ts, LEVEL_TAG)) return match;
  return match["00080052"] ? match : { ...match, "00080052": level };
}

function isDicomJson(data: unknown): boolean {
  if (typeof data !== "object" || data === null || Array.isArray(data)) return false;
  const keys = Object.keys(data);
  return keys.length > 0 && keys.every((k) => /^[0-9A-Fa-f]{8}$/.test(k));
}
