/**
 * The C-STORE sub-operations of a C-GET (on the caller's own association) and of a C-MOVE (on a new
 * association to the destination AE), with a pending response carrying the counts after each.
 */
import { GatewayError } from "../../errors.ts";
import {
  type DimseConnection,
  type DimseTls,
  lib,
  type LibRequest,
  type LibResponse,
  RawDataset,
  ScuAssociation,
  storeContexts,
} from "../../adapters/dimse/mod.ts";
import {
  boundaryOf,
  decodeMultipart,
  isP10,
  type P10File,
  parseP10,
  STATUS,
  statusKind,
} from "../../dicom/mod.ts";
import type { ResponseEnvelope } from "../../envelope.ts";

/** Sub-operation counts. */
export interface Counts {
  remaining: number;
  completed: number;
  failed: number;
  warning: number;
}

/** The instances of a retrieval response (multipart/related or one Part 10 file). */
export async function responseInstances(res: ResponseEnvelope): Promise<P10File[]> {
  const bytes = await res.body.bytes();
  const type = res.body.contentType ?? "";
  if (bytes.length === 0) return [];
  if (type.toLowerCase().startsWith("multipart/")) {
    const boundary = boundaryOf(type);
    if (!boundary) {
      throw new GatewayError(
        502,
        "invalid_pipeline_answer",
        "multipart response without a boundary",
      );
    }
    return decodeMultipart(bytes, boundary).filter((p) => isP10(p.body)).map((p) =>
      parseP10(p.body)
    );
  }
  if (isP10(bytes)) return [parseP10(bytes)];
  throw new GatewayError(
    502,
    "invalid_pipeline_answer",
    `the pipeline answered ${type || "no content type"}, not DICOM instances`,
  );
}

/** The final status for counts: success, warning (some failed) or failure (all failed). */
export function finalStatus(c: Counts, cancelled: boolean): number {
  if (cancelled) return STATUS.cancel;
  if (c.failed === 0 && c.warning === 0) return STATUS.success;
  if (c.completed === 0 && c.warning === 0) return STATUS.outOfResourcesSubOps;
  return STATUS.warningSubOps;
}

function storeRequest(f: P10File, originator?: { aet: string; messageId: number }): LibRequest {
  const req = new lib.requests.CStoreRequest(new RawDataset(f.dataset, f.meta.transferSyntax));
  req.setAffectedSopClassUid(f.meta.sopClassUid);
  req.setAffectedSopInstanceUid(f.meta.sopInstanceUid);
  if (originator) {
    const cmd = req.getCommandDataset();
    cmd.setElement("MoveOriginatorApplicationEntityTitle", originator.aet);
    cmd.setElement("MoveOriginatorMessageID", originator.messageId as unknown as string);
  }
  return req;
}

function tally(c: Counts, status: number): void {
  c.remaining--;
  const kind = statusKind(status);
  if (kind === "success") c.completed++;
  else if (kind === "warning") c.warning++;
  else c.failed++;
}

/**
 * The C-STORE sub-operations of a retrieval: `send` stores each file (its status), or undefined
 * when the receiver accepted no context for its SOP class; counted as they go, until cancelled.
 */
async function storeEach(
  files: P10File[],
  cancelled: () => boolean,
  progress: (c: Counts) => void,
  send: (f: P10File) => Promise<number | undefined> | undefined,
): Promise<Counts> {
  const c: Counts = { remaining: files.length, completed: 0, failed: 0, warning: 0 };
  for (const f of files) {
    if (cancelled()) break;
    tally(c, (await send(f)) ?? STATUS.sopClassNotSupported);
    progress(c);
  }
  return c;
}

/** C-GET: store each instance back to the caller over its association. */
export async function getSubOperations(
  conn: DimseConnection,
  files: P10File[],
  cancelled: () => boolean,
  progress: (c: Counts) => void,
): Promise<Counts> {
  return await storeEach(files, cancelled, progress, (f) => {
    const req = storeRequest(f);
    // The caller offered no storage context (SCP role) for this SOP class: undefined.
    if (!conn.negotiated!.getAcceptedPresentationContextFromRequest(req)) return undefined;
    return new Promise<number>((resolve) => {
      req.on("response", (r: LibResponse) => resolve(r.getStatus()));
      conn.sendRequests(req);
    });
  });
}

/** C-MOVE: open an association to the destination and store each instance there. */
export async function moveSubOperations(
  target: { aet: string; host: string; port: number; callingAet: string; tls?: DimseTls },
  originator: { aet: string; messageId: number },
  files: P10File[],
  cancelled: () => boolean,
  progress: (c: Counts) => void,
): Promise<Counts> {
  if (files.length === 0) return { remaining: 0, completed: 0, failed: 0, warning: 0 };
  const assoc = await ScuAssociation.open({
    host: target.host,
    port: target.port,
    callingAet: target.callingAet,
    calledAet: target.aet,
    contexts: storeContexts(files),
    tls: target.tls,
  });
  try {
    return await storeEach(files, cancelled, progress, async (f) => {
      if (!assoc.accepted(f.meta.sopClassUid)) return undefined;
      return (await assoc.request(storeRequest(f, originator))).getStatus();
    });
  } finally {
    await assoc.release();
  }
}
