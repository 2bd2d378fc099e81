/**
 * Which DIMSE operation an envelope asks for, and with what identifier. In order:
 * 1. `metadata.dicom_operation` (`C-ECHO`, `C-FIND`, `C-GET`, `C-MOVE`, `C-STORE`; the `C-` is
 *    optional, case is ignored): set by the dicom_scp endpoint or by a `metadata_transform`;
 * 2. the method of a DIMSE envelope (the dicom_scp endpoint sets it to the operation);
 * 3. the HTTP method and path, in DICOMweb shape (relative to the endpoint prefix):
 *    `/echo` -> C-ECHO; GET `/studies`, `/studies/{s}/series`, `/studies/{s}/series/{se}/instances`
 *    (also `/series`, `/instances`) -> C-FIND; GET `/studies/{s}[/series/{se}[/instances/{i}]]`
 *    -> retrieve (C-GET or C-MOVE per `dimse_retrieve_mode`), with `/metadata` -> retrieve as
 *    DICOM JSON; POST/PUT `/studies[/{s}]` -> C-STORE of the body's instances.
 * The identifier is the body's DICOM JSON (DIMSE envelopes, or a POSTed application/dicom+json),
 * with QIDO query parameters and path UIDs merged in; `metadata.dicom_level` overrides the level.
 */
import {
  buildQuery,
  type DicomJson,
  type DicomQuery,
  levelOf,
  type QrLevel,
} from "../../dicom/mod.ts";
import type { RequestEnvelope } from "../../envelope.ts";
import { GatewayError } from "../../errors.ts";

/** The DIMSE operations of the backend. */
export type DimseOperation = "C-ECHO" | "C-FIND" | "C-GET" | "C-MOVE" | "C-STORE";

/** What the backend does for one envelope. */
export type DicomCall =
  | { op: "C-ECHO" }
  | { op: "C-FIND"; query: DicomQuery }
  | {
    op: "C-GET" | "C-MOVE";
    level: QrLevel;
    identifier: DicomJson;
    /** Answer DICOM JSON of the retrieved instances instead of the instances. */
    metadata: boolean;
  }
  | { op: "C-STORE" };

const OPERATIONS: readonly DimseOperation[] = ["C-ECHO", "C-FIND", "C-GET", "C-MOVE", "C-STORE"];
const UID = "([0-9.]+)";
const PATHS: { re: RegExp; kind: "find" | "retrieve"; level: QrLevel; metadata?: boolean }[] = [
  { re: new RegExp(`^/studies$`), kind: "find", level: "STUDY" },
  { re: new RegExp(`^/series$`), kind: "find", level: "SERIES" },
  { re: new RegExp(`^/instances$`), kind: "find", level: "IMAGE" },
  { re: new RegExp(`^/studies/${UID}/series$`), kind: "find", level: "SERIES" },
  { re: new RegExp(`^/studies/${UID}/instances$`), kind: "find", level: "IMAGE" },
  { re: new RegExp(`^/studies/${UID}/series/${UID}/instances$`), kind: "find", level: "IMAGE" },
  { re: new RegExp(`^/studies/${UID}$`), kind: "retrieve", level: "STUDY" },
  { re: new RegExp(`^/studies/${UID}/series/${UID}$`), kind: "retrieve", level: "SERIES" },
  {
    re: new RegExp(`^/studies/${UID}/series/${UID}/instances/${UID}$`),
    kind: "retrieve",
    level: "IMAGE",
  },
  {
    re: new RegExp(`^/studies/${UID}/metadata$`),
    kind: "retrieve",
    level: "STUDY",
    metadata: true,
  },
  {
    re: new RegExp(`^/studies/${UID}/series/${UID}/metadata$`),
    kind: "retrieve",
    level: "SERIES",
    metadata: true,
  },
  {
    re: new RegExp(`^/studies/${UID}/series/${UID}/instances/${UID}/metadata$`),
    kind: "retrieve",
    level: "IMAGE",
    metadata: true,
  },
];

/** `find` / `C-Find` / `c-find` -> `C-FIND`; undefined when not an operation. */
export function normalizeOperation(text: string | undefined): DimseOperation | undefined {
  if (!text) return undefined;
  const upper = text.trim().toUpperCase();
  const op = (upper.startsWith("C-") ? upper : `C-${upper}`) as DimseOperation;
  return OPERATIONS.includes(op) ? op : undefined;
}

function badRequest(message: string): GatewayError {
  return new GatewayError(400, "invalid_dicom_request", message);
}

/** The identifier carried by the body (DICOM JSON object), or `{}`. */
async function bodyIdentifier(req: RequestEnvelope): Promise<DicomJson> {
  if (req.body.isEmpty || req.body.format !== "json") return {};
  const data = await req.body.data();
  if (data === null || data === undefined) return {};
  if (typeof data !== "object" || Array.isArray(data)) {
    throw badRequest("the identifier must be a DICOM JSON object");
  }
  return data as DicomJson;
}

/** Path UIDs: always study, then series, then instance, in path order. */
interface PathUids {
  study?: string;
  series?: string;
  instance?: string;
}

function uidsOf(m: RegExpExecArray): PathUids {
  const [, study, series, instance] = m;
  return { study, series, instance };
}

/** Decide the operation and its identifier; 400 for requests that name none. */
export async function resolveCall(
  req: RequestEnvelope,
  retrieveMode: "get" | "move",
): Promise<DicomCall> {
  const named = req.metadata.dicom_operation;
  let op = normalizeOperation(named);
  if (named && !op) throw badRequest(`unknown dicom_operation \`${named}\``);
  if (!op && req.protocol === "dimse") op = normalizeOperation(req.method);
  const levelOverride = req.metadata.dicom_level?.toUpperCase() as QrLevel | undefined;
  const path = req.path.replace(/\/+$/, "") || "/";
  const route = PATHS.map((p) => ({ p, m: p.re.exec(path) })).find((x) => x.m);

  if (!op) {
    if (path === "/echo") op = "C-ECHO";
    else if (
      (req.method === "POST" || req.method === "PUT") && /^\/studies(\/[0-9.]+)?$/.test(path)
    ) {
      op = "C-STORE";
    } else if ((req.method === "GET" || req.method === "HEAD") && route) {
      op = route.p.kind === "find" ? "C-FIND" : retrieveMode === "move" ? "C-MOVE" : "C-GET";
    } else {
      throw badRequest(
        `no DIMSE operation for ${req.method} ${path}: set metadata dicom_operation or use a DICOMweb-style path`,
      );
    }
  }
  if (op === "C-ECHO" || op === "C-STORE") return { op };

  const base = await bodyIdentifier(req);
  const uids: PathUids = route ? uidsOf(route.m!) : {};
  const level = levelOverride ?? (route?.p.level) ?? levelOf(base) ?? "STUDY";
  if (!["PATIENT", "STUDY", "SERIES", "IMAGE"].includes(level)) {
    throw badRequest(`unknown query/retrieve level \`${level}\``);
  }
  if (op === "C-FIND") {
    try {
      const params = req.protocol === "dimse" ? new URLSearchParams() : req.query;
      const query = req.protocol === "dimse" && !route
        ? { level, identifier: base, offset: 0, fuzzy: false, includeAll: true }
        : buildQuery(level, params, uids, base);
      return { op, query };
    } catch (err) {
      throw badRequest((err as Error).message);
    }
  }
  const identifier: DicomJson = { ...base, "00080052": { vr: "CS", Value: [level] } };
  if (uids.study) identifier["0020000D"] = { vr: "UI", Value: [uids.study] };
  if (uids.series) identifier["0020000E"] = { vr: "UI", Value: [uids.series] };
  if (uids.instance) identifier["00080018"] = { vr: "UI", Value: [uids.instance] };
  return { op, level, identifier, metadata: route?.p.metadata ?? false };
}
