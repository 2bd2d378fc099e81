/**
 * The `dicom_scu` backend: an envelope becomes a DIMSE operation to a PACS (see operation.ts for
 * how the operation is chosen), and the outcome becomes a response:
 * - C-ECHO: JSON `{status, status_name, round_trip_ms}`;
 * - C-FIND: `application/dicom+json`, the array of matches;
 * - C-GET / C-MOVE: `multipart/related; type="application/dicom"` of the retrieved Part 10 files,
 *   or with `/metadata` paths the array of their DICOM JSON (binary values over 1 KiB as
 *   BulkDataURIs), or with frames and bulk data paths those of the instance (wado.ts);
 * - C-STORE: JSON `{status, instances: [{sop_class_uid, sop_instance_uid, status, ...}]}`.
 * Every response carries `x-dicom-status` (hex) and retrievals the sub-operation counts
 * (`x-dicom-completed`, `-failed`, `-warning`, `-remaining`). Failures are GatewayErrors (errors.ts).
 *
 * @example
 * ```ts
 * import { normalizeOperation } from "./mod.ts";
 *
 * // metadata.dicom_operation may be written loosely; anything else is not an operation.
 * console.log(normalizeOperation("find"), normalizeOperation("c-get")); // C-FIND C-GET
 * console.log(normalizeOperation("upload")); // undefined
 * ```
 *
 * @module
 */
import { resolve } from "node:path";
import type { BackendConfig } from "../../../shared/gateway_config/mod.ts";
import {
  type AbortSource,
  type DimseTls,
  lib,
  newRequest,
  type ProposedContext,
  ScuAssociation,
  storeContexts,
} from "../../adapters/dimse/mod.ts";
import {
  instancesOfBody,
  STATUS,
  statusHex,
  statusKind,
  statusName,
  UNCOMPRESSED,
} from "../../dicom/mod.ts";
import { Body, type RequestEnvelope, ResponseEnvelope } from "../../envelope.ts";
import { causedError, GatewayError } from "../../errors.ts";
import {
  type Backend,
  type BackendCall,
  type BuildContext,
  callAbortOf,
} from "../../pipeline/mod.ts";
import type { Logger } from "../../../shared/mod.ts";
import { dimseGatewayError, statusError } from "./errors.ts";
import { queryModel, runSearch } from "./find.ts";
import { type DicomCall, resolveCall } from "./operation.ts";
import { planGet, type RetrieveSettings, retrieveSettings } from "./proposal.ts";
import { getInPasses, type Session } from "./get_passes.ts";
import { FileCollector, retrieveModel, type RetrieveResult, runMove } from "./retrieve.ts";
import { runStore, stored, type StoreOutcome } from "./store.ts";
import { IncomingStoreScp } from "./store_scp.ts";
import { checkAcceptable, retrievalResponse } from "./wado.ts";
import { AssociationPool, type PoolEvents } from "./pool.ts";

export {
  type DicomCall,
  type DimseOperation,
  normalizeOperation,
  resolveCall,
  type RetrieveOutput,
} from "./operation.ts";

const DICOM_JSON = "application/dicom+json";

/** Options of a dicom_scu backend (validated by the config schema). */
interface ScuOptions {
  aet: string;
  host: string;
  port: number;
  local_aet: string;
  dimse_retrieve_mode: "get" | "move";
  use_tls: boolean;
  incoming_store_port?: number;
  persistent_store_scp: boolean;
  ca_cert_path?: string;
  cert_path?: string;
  key_path?: string;
  retrieve_sop_classes: string[];
  retrieve_transfer_syntaxes: string[];
  retrieve_sop_class_lookup: boolean;
  association_idle_secs: number;
  max_associations: number;
}

/** A PACS reached over DIMSE. */
export class DicomScuBackend implements Backend {
  readonly name: string;
  /**
   * A C-STORE's instances are sent as views of the body; once the peer answered the last one (or
   * the association is gone), nothing reads them.
   */
  readonly releasesBody = true;
  readonly config: BackendConfig;
  readonly #o: ScuOptions;
  readonly #tls?: DimseTls;
  readonly #limit: number;
  readonly #logger: Logger;
  readonly #settings: RetrieveSettings;
  readonly #pool: AssociationPool;
  #storeScp: IncomingStoreScp | undefined;

  constructor(
    config: BackendConfig,
    tls: DimseTls | undefined,
    limit: number,
    logger: Logger,
    events?: PoolEvents,
    shared?: SharedArrayBuffer,
  ) {
    this.name = config.name;
    this.config = config;
    this.#o = config.options as unknown as ScuOptions;
    this.#tls = tls;
    this.#limit = limit;
    this.#logger = logger;
    this.#settings = retrieveSettings(this.#o);
    this.#pool = new AssociationPool({
      idleSecs: this.#o.association_idle_secs ?? 0,
      maxOpen: this.#o.max_associations ?? 0,
      open: (contexts, signal) => this.#associate(contexts, signal),
      events,
      shared,
    });
  }

  /** Open and idle associations to the peer now (status, tests). */
  get associations(): { open: number; idle: number } {
    return this.#pool.counts;
  }

  get #peer(): string {
    return `${this.#o.aet}@${this.#o.host}:${this.#o.port}`;
  }

  /** Start the persistent incoming store SCP (move mode). */
  async start(): Promise<void> {
    if (this.#o.dimse_retrieve_mode === "move" && this.#o.persistent_store_scp) {
      this.#storeScp = await IncomingStoreScp.acquire(
        this.#o.incoming_store_port!,
        this.#o.local_aet,
        this.#logger,
      );
    }
  }

  /** Run the envelope's DIMSE operation. */
  async invoke(req: RequestEnvelope, call: BackendCall): Promise<ResponseEnvelope> {
    const dc = await resolveCall(req, this.#o.dimse_retrieve_mode);
    let res: ResponseEnvelope;
    try {
      res = await this.#run(req, dc, call);
    } catch (err) {
      throw dimseGatewayError(err, this.#peer);
    }
    res.backend = this.name;
    return res;
  }

  async #associate(contexts: ProposedContext[], signal: AbortSource): Promise<ScuAssociation> {
    return await ScuAssociation.open({
      host: this.#o.host,
      port: this.#o.port,
      callingAet: this.#o.local_aet,
      calledAet: this.#o.aet,
      contexts,
      tls: this.#tls,
      signal,
    });
  }

  /**
   * Runs `fn` on an association of the pool (pool.ts). With `reusable` (C-ECHO, C-FIND,
   * C-STORE) an idle association serves when it proposed `contexts`, the association is kept
   * for the next operation, and the operation is sent again once on a new association if its own
   * breaks; otherwise (C-GET, C-MOVE) the association is new and released afterwards.
   */
  // Not async (nor #run): the pool's promise is handed on as it is, no extra turns per level.
  #with<T>(
    contexts: ProposedContext[],
    call: BackendCall,
    fn: (a: ScuAssociation) => Promise<T>,
    reusable = false,
  ): Promise<T> {
    // The executor's abort hook where there is one: no AbortController and listener per call.
    const signal = callAbortOf(call);
    return this.#pool.run(contexts, signal, fn, REUSE[reusable ? 1 : 0]);
  }

  #run(req: RequestEnvelope, dc: DicomCall, call: BackendCall): Promise<ResponseEnvelope> {
    switch (dc.op) {
      case "C-ECHO":
        return this.#echo(call);
      case "C-FIND":
        return this.#find(req, dc, call);
      case "C-GET":
      case "C-MOVE":
        return this.#retrieve(req, dc, call);
      case "C-STORE":
        return this.#store(req, call);
    }
  }

  async #echo(call: BackendCall): Promise<ResponseEnvelope> {
    const started = performance.now();
    const res = await this.#with(
      ECHO_CONTEXTS,
      call,
      (a) => a.request(newRequest(lib.requests.CEchoRequest)),
      true,
    );
    const status = res.getStatus();
    if (statusKind(status) === "failure") throw statusError("C-ECHO", this.#peer, status);
    const answer = {
      status: statusHex(status),
      status_name: statusName(status),
      aet: this.#o.aet,
      round_trip_ms: Math.round((performance.now() - started) * 100) / 100,
    };
    // Kept as data (a DIMSE endpoint reads only the status), serialized when HTTP sends it.
    return ResponseEnvelope.fromFields(
      200,
      ["content-type", "application/json", "x-dicom-status", answer.status],
      Body.fromData(answer, "application/json"),
    );
  }

  async #find(
    req: RequestEnvelope,
    dc: Extract<DicomCall, { op: "C-FIND" }>,
    call: BackendCall,
  ): Promise<ResponseEnvelope> {
    const result = await this.#with(
      findContexts(queryModel(dc.query)),
      call,
      // A DIMSE caller's matches stay bytes unless the pipeline looks at them.
      (a) => runSearch(a, dc.query, req.protocol === "dimse"),
      true,
    );
    if (statusKind(result.status) === "failure") {
      throw statusError("C-FIND", this.#peer, result.status, result.comment);
    }
    // QIDO results carry no QueryRetrieveLevel; a DIMSE caller gets the identifier as answered.
    const matches = req.protocol === "dimse"
      ? result.matches
      : result.matches.map(({ "00080052": _level, ...rest }) => rest);
    // Kept as data: a DIMSE endpoint takes the matches as they are, HTTP serializes them.
    return ResponseEnvelope.fromFields(
      200,
      [
        "content-type",
        DICOM_JSON,
        "x-dicom-matches",
        String(matches.length),
        "x-dicom-status",
        hexOf(result.status),
      ],
      Body.fromData(matches, DICOM_JSON),
    );
  }

  async #retrieve(
    req: RequestEnvelope,
    dc: Extract<DicomCall, { op: "C-GET" | "C-MOVE" }>,
    call: BackendCall,
  ): Promise<ResponseEnvelope> {
    // Frames, bulk data, renderings: refuse at once what no stored data could satisfy.
    checkAcceptable(dc.output, req);
    const mode = this.#o.dimse_retrieve_mode;
    const result = mode === "move" ? await this.#move(dc, call) : await this.#get(req, dc, call);
    const op = mode === "move" ? "C-MOVE" : "C-GET";
    if (statusKind(result.status) === "failure" && result.files.length === 0) {
      throw statusError(op, this.#peer, result.status, result.comment);
    }
    const instanceUid = dc.identifier["00080018"]?.Value?.[0] as string | undefined;
    const res = await retrievalResponse(result.files, dc.output, req, instanceUid);
    const c = result.counts;
    res.headers.set("x-dicom-completed", String(result.files.length || c.completed));
    res.headers.set("x-dicom-failed", String(c.failed));
    res.headers.set("x-dicom-warning", String(c.warning));
    res.headers.set("x-dicom-remaining", String(c.remaining));
    return withStatus(res, result.status);
  }

  /** C-GET with the proposal of proposal.ts, in passes (get_passes.ts). */
  async #get(
    req: RequestEnvelope,
    dc: Extract<DicomCall, { op: "C-GET" | "C-MOVE" }>,
    call: BackendCall,
  ): Promise<RetrieveResult> {
    const session: Session = (contexts, fn) => this.#with(contexts, call, fn);
    const debug = (msg: string, fields: Record<string, unknown>) =>
      this.#logger.debug(msg, { backend: this.name, ...fields });
    const plan = await planGet(req, dc, this.#settings, {
      lookup: this.#o.retrieve_sop_class_lookup ? session : undefined,
      log: debug,
    });
    return await getInPasses(session, plan, dc.level, dc.identifier, {
      limit: this.#limit,
      signal: call.signal,
      onPassError: (err) =>
        debug("dicom_scu C-GET retry pass failed", { error: (err as Error).message }),
    });
  }

  async #move(
    dc: Extract<DicomCall, { op: "C-GET" | "C-MOVE" }>,
    call: BackendCall,
  ): Promise<RetrieveResult> {
    const scp = this.#storeScp ??
      await IncomingStoreScp.acquire(this.#o.incoming_store_port!, this.#o.local_aet, this.#logger);
    const collector = new FileCollector(this.#limit);
    const unregister = scp.expect(dc.identifier, collector);
    try {
      return await this.#with(
        [{ abstractSyntax: retrieveModel("move", dc.level), transferSyntaxes: UNCOMPRESSED }],
        call,
        (a) => runMove(a, dc.level, dc.identifier, this.#o.local_aet, collector),
      );
    } finally {
      unregister();
      if (scp !== this.#storeScp) await scp.release();
    }
  }

  async #store(req: RequestEnvelope, call: BackendCall): Promise<ResponseEnvelope> {
    let files;
    try {
      files = instancesOfBody(await req.body.bytes(), req.body.contentType);
    } catch (err) {
      throw causedError(400, "invalid_dicom_body", (err as Error).message, err);
    }
    if (files.length === 0) {
      throw new GatewayError(400, "invalid_dicom_body", "no instance to store");
    }
    // Idempotent (an instance stored twice is stored once): a broken association's remaining
    // instances go once more on a new one.
    const done: StoreOutcome[] = [];
    const outcomes = await this.#with(
      storeContexts(files),
      call,
      (a) => runStore(a, files, done),
      true,
    );
    const ok = outcomes.filter(stored).length;
    const last = parseInt(outcomes[outcomes.length - 1].status.slice(2), 16);
    if (ok === 0) {
      const first = outcomes[0];
      throw statusError(
        "C-STORE",
        this.#peer,
        parseInt(first.status.slice(2), 16),
        first.comment ?? `none of ${outcomes.length} instance(s) stored`,
      );
    }
    const status = ok === outcomes.length ? last : STATUS.warningSubOps;
    const res = ResponseEnvelope.json(ok === outcomes.length ? 200 : 202, {
      status: statusHex(status),
      status_name: statusName(status),
      stored: ok,
      failed: outcomes.length - ok,
      instances: outcomes,
    });
    return withStatus(res, status);
  }

  /** Release idle associations and the incoming store SCP reference. */
  async close(): Promise<void> {
    await this.#pool.close();
    const scp = this.#storeScp;
    this.#storeScp = undefined;
    await scp?.release();
  }
}

/** statusHex of the statuses met, made once each (one per C-FIND answer). */
const HEX = new Map<number, string>();

function hexOf(status: number): string {
  let hex = HEX.get(status);
  if (hex === undefined) {
    hex = statusHex(status);
    if (HEX.size < 256) HEX.set(status, hex);
  }
  return hex;
}

/** How the pool runs an operation on an association of its own ([0]) or a reusable one ([1]). */
const REUSE = [{ reuse: false, retry: false }, { reuse: true, retry: true }] as const;

/** The context of a C-ECHO (one array: the pool works out its key once). */
const ECHO_CONTEXTS: ProposedContext[] = [
  { abstractSyntax: "1.2.840.10008.1.1", transferSyntaxes: UNCOMPRESSED },
];

/** The context of a C-FIND in information model `model`, one array per model. */
const FIND_CONTEXTS = new Map<string, ProposedContext[]>();

function findContexts(model: string): ProposedContext[] {
  let contexts = FIND_CONTEXTS.get(model);
  if (contexts === undefined) {
    contexts = [{ abstractSyntax: model, transferSyntaxes: UNCOMPRESSED }];
    if (FIND_CONTEXTS.size < 64) FIND_CONTEXTS.set(model, contexts);
  }
  return contexts;
}

function withStatus(res: ResponseEnvelope, status: number): ResponseEnvelope {
  res.headers.set("x-dicom-status", statusHex(status));
  return res;
}

async function readPem(path: string | undefined, baseDir: string): Promise<string | undefined> {
  return path === undefined ? undefined : await Deno.readTextFile(resolve(baseDir, path));
}

/** Build a `dicom_scu` backend (reads TLS files; starts a persistent store SCP). */
export async function createDicomScuBackend(
  config: BackendConfig,
  ctx: BuildContext,
): Promise<DicomScuBackend> {
  const o = config.options as unknown as ScuOptions;
  const tls = o.use_tls
    ? {
      ca: await readPem(o.ca_cert_path, ctx.baseDir),
      cert: await readPem(o.cert_path, ctx.baseDir),
      key: await readPem(o.key_path, ctx.baseDir),
    }
    : undefined;
  const m = ctx.metrics?.associations;
  const name = config.name;
  const backend = new DicomScuBackend(
    config,
    tls,
    ctx.config.proxy.content_limits.max_body_size,
    ctx.logger,
    m && {
      opened: () => m.opened(name),
      reused: () => m.reused(name),
      retried: () => m.retried(name),
      changed: (open, idle) => m.changed(name, open, idle),
    },
    // The pools of this backend in the other isolates (HTTP requests are served by workers).
    ctx.sharedMemory?.(`dicom_scu_pool:${name}`, 8),
  );
  if (!ctx.validateOnly) await backend.start();
  return backend;
}
