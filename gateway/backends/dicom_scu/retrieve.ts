/**
 * Retrieval: C-GET (instances arrive as C-STORE sub-operations on the same association) or C-MOVE
 * (the peer sends them to our incoming store SCP). Either way the result is the list of Part 10
 * files plus the sub-operation counts of the final response.
 */
import {
  type CStoreRequest,
  datasetJson,
  JsonDataset,
  lib,
  type LibResponse,
  RawDataset,
  type ScuAssociation,
} from "../../adapters/dimse/mod.ts";
import { type DicomJson, SOP, STATUS, writeP10 } from "../../dicom/mod.ts";
import { GatewayError } from "../../errors.ts";

/** Counts of the final C-GET/C-MOVE response. */
export interface SubOperations {
  completed: number;
  failed: number;
  warning: number;
  remaining: number;
}

/** What a retrieval produced. */
export interface RetrieveResult {
  files: Uint8Array[];
  status: number;
  comment?: string;
  counts: SubOperations;
  /** Failed SOP Instance UID List (0008,0058) of the final response. */
  failed: string[];
}

/** Collects retrieved files up to a byte budget. */
export class FileCollector {
  readonly files: Uint8Array[] = [];
  /** SOP Instance UIDs of the files. */
  readonly instances = new Set<string>();
  #bytes = 0;
  readonly limit: number;
  constructor(limit: number) {
    this.limit = limit;
  }
  /** Add one received instance (one already there is kept once); false when over the budget. */
  add(request: CStoreRequest): boolean {
    const uid = request.getAffectedSopInstanceUid();
    if (this.instances.has(uid)) return true;
    const dataset = request.getDataset() as RawDataset;
    this.#bytes += dataset.bytes.byteLength;
    if (this.#bytes > this.limit) return false;
    this.instances.add(uid);
    this.files.push(
      dataset.file ?? writeP10({
        transferSyntax: dataset.getTransferSyntaxUid(),
        sopClassUid: request.getAffectedSopClassUid(),
        sopInstanceUid: request.getAffectedSopInstanceUid(),
      }, dataset.bytes),
    );
    return true;
  }
  /** True once a file was refused for the budget. */
  get over(): boolean {
    return this.#bytes > this.limit;
  }
}

function counts(res: LibResponse): SubOperations {
  const r = res as unknown as {
    getCompleted(): number;
    getFailures(): number;
    getWarnings(): number;
    getRemaining(): number;
  };
  return {
    completed: r.getCompleted() ?? 0,
    failed: r.getFailures() ?? 0,
    warning: r.getWarnings() ?? 0,
    remaining: r.getRemaining() ?? 0,
  };
}

/** The Failed SOP Instance UID List of a final C-GET/C-MOVE response. */
function failedInstances(res: LibResponse): string[] {
  let values: unknown[];
  try {
    values = datasetJson(res.getDataset())["00080058"]?.Value ?? [];
  } catch {
    return []; // an unreadable identifier only means no retry
  }
  return values.map((v) => String(v).trim()).filter((v) => v !== "");
}

/** The retrieve model for a level: patient root for PATIENT, else study root. */
export function retrieveModel(op: "get" | "move", level: string): string {
  if (op === "get") return level === "PATIENT" ? SOP.patientRootGet : SOP.studyRootGet;
  return level === "PATIENT" ? SOP.patientRootMove : SOP.studyRootMove;
}

function tooLarge(limit: number): GatewayError {
  return new GatewayError(
    502,
    "response_too_large",
    `retrieved instances exceed max_body_size of ${limit} bytes`,
  );
}

/**
 * Sends a retrieval request (C-GET or C-MOVE) for `identifier` and shapes its final response with
 * the instances `collector` received; over the byte limit it is 502 `response_too_large`.
 */
async function retrieve(
  assoc: ScuAssociation,
  request: InstanceType<typeof lib.requests.CGetRequest | typeof lib.requests.CMoveRequest>,
  model: string,
  identifier: DicomJson,
  collector: FileCollector,
): Promise<RetrieveResult> {
  request.setAffectedSopClassUid(model);
  const ts = assoc.accepted(model)?.getAcceptedTransferSyntaxUid() ?? "";
  request.setDataset(new JsonDataset(identifier, ts));
  const final = await assoc.request(request);
  if (collector.over) throw tooLarge(collector.limit);
  return {
    files: collector.files,
    status: final.getStatus(),
    comment: final.getErrorComment() || undefined,
    counts: counts(final),
    failed: failedInstances(final),
  };
}

/** C-GET `identifier` at `level`, adding the instances to `collector` (bounded in bytes). */
export async function runGet(
  assoc: ScuAssociation,
  level: string,
  identifier: DicomJson,
  collector: FileCollector,
): Promise<RetrieveResult> {
  const request = new lib.requests.CGetRequest();
  // The instances come back on this association: collected until the limit, then cancelled.
  assoc.onStore = (sub) => {
    if (collector.add(sub)) return Promise.resolve(STATUS.success);
    assoc.cancel(request);
    return Promise.resolve(STATUS.outOfResources);
  };
  return await retrieve(assoc, request, retrieveModel("get", level), identifier, collector);
}

/** C-MOVE `identifier` to `destination` (our store SCP); `received` holds what arrived. */
export async function runMove(
  assoc: ScuAssociation,
  level: string,
  identifier: DicomJson,
  destination: string,
  received: FileCollector,
): Promise<RetrieveResult> {
  const request = new lib.requests.CMoveRequest();
  request.getCommandDataset().setElement("MoveDestination", destination);
  return await retrieve(assoc, request, retrieveModel("move", level), identifier, received);
}
