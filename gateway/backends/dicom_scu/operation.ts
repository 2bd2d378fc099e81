/**
 * Which DIMSE operation an envelope asks for, and with what identifier. In order:
 * 1. `metadata.dicom_operation` (`C-ECHO`, `C-FIND`, `C-GET`, `C-MOVE`, `C-STORE`; the `C-` is
 *    optional, case is ignored): set by the dicom_scp endpoint or by a `metadata_transform`;
 * 2. the method of a DIMSE envelope (the dicom_scp endpoint sets it to the operation);
 * 3. the HTTP method and path, in DICOMweb shape (relative to the endpoint prefix):
 *    `/echo` -> C-ECHO; GET `/studies`, `/studies/{s}/series`, `/studies/{s}/series/{se}/instances`
 *    (also `/series`, `/instances`) -> C-FIND; GET `/studies/{s}[/series/{se}[/instances/{i}]]`
 *    -> retrieve (C-GET or C-MOVE per `dimse_retrieve_mode`), with `/metadata` -> retrieve as
 *    DICOM JSON; `.../instances/{i}/frames/{list}` and `/bulkdata/{s}/{se}/{i}/{tag path}` ->
 *    retrieve the instance and answer those frames or that bulk data value; POST/PUT
 *    `/studies[/{s}]` -> C-STORE of the body's instances.
 * The identifier is the body's DICOM JSON (DIMSE envelopes, or a POSTed application/dicom+json),
 * with QIDO query parameters and path UIDs merged in; `metadata.dicom_level` overrides the level.
 */
import {
  buildQuery,
  type DicomJson,
  type DicomQuery,
  FrameListError,
  levelOf,
  parseBulkDataPath,
  parseFrameList,
  type QrLevel,
  SOP,
} from "../../dicom/mod.ts";
import type { RequestEnvelope } from "../../envelope.ts";
import { GatewayError } from "../../errors.ts";
import { peekElement } from "../../adapters/dimse/mod.ts";

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
    /** What to answer with the retrieved instances. */
    output: RetrieveOutput;
  }
  | { op: "C-STORE" };

/**
 * What a retrieval answers: the instances, their DICOM JSON, frames of the one instance (1-based,
 * in request order), one bulk data value of it (a tag path, see gateway/dicom/bulkdata.ts), or one
 * frame rendered as an image (`/rendered`, `/thumbnail`: gateway/dicom/render).
 */
export type RetrieveOutput =
  | { kind: "instances" }
  | { kind: "metadata" }
  | { kind: "frames"; frames: number[] }
  | { kind: "bulkdata"; tagPath: string }
  | { kind: "rendered"; frame: number; thumbnail: boolean };

const OPERATIONS: readonly DimseOperation[] = ["C-ECHO", "C-FIND", "C-GET", "C-MOVE", "C-STORE"];
const DICOM_JSON = "application/dicom+json";
const LEVELS: readonly string[] = ["PATIENT", "STUDY", "SERIES", "IMAGE"];
const UID = "([0-9.]+)";
const PATHS: {
  re: RegExp;
  kind: "find" | "retrieve";
  level: QrLevel;
  output?: "metadata" | "frames" | "rendered" | "thumbnail";
}[] = [
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
    output: "metadata",
  },
  {
    re: new RegExp(`^/studies/${UID}/series/${UID}/metadata$`),
    kind: "retrieve",
    level: "SERIES",
    output: "metadata",
  },
  {
    re: new RegExp(`^/studies/${UID}/series/${UID}/instances/${UID}/metadata$`),
    kind: "retrieve",
    level: "IMAGE",
    output: "metadata",
  },
  {
    re: new RegExp(`^/studies/${UID}/series/${UID}/instances/${UID}/frames/([^/]+)$`),
    kind: "retrieve",
    level: "IMAGE",
    output: "frames",
  },
  ...(["rendered", "thumbnail"] as const).flatMap((output) => [
    {
      re: new RegExp(`^/studies/${UID}/series/${UID}/instances/${UID}/${output}$`),
      kind: "retrieve" as const,
      level: "IMAGE" as const,
      output,
    },
    {
      re: new RegExp(`^/studies/${UID}/series/${UID}/instances/${UID}/frames/([^/]+)/${output}$`),
      kind: "retrieve" as const,
      level: "IMAGE" as const,
      output,
    },
  ]),
];

/** Study and series renderings: not made by the bridge (which renders one frame at a time). */
const WHOLE_RENDERINGS = new RegExp(`^/studies/${UID}(/series/${UID})?/(rendered|thumbnail)$`);

/** `find` / `C-Find` / `c-find` -> `C-FIND`; undefined when not an operation. */
export function normalizeOperation(text: string | undefined): DimseOperation | undefined {
  if (!text) return undefined;
  // The dicom_scp endpoint names them exactly so: no string work per operation.
  if ((OPERATIONS as readonly string[]).includes(text)) return text as DimseOperation;
  const upper = text.trim().toUpperCase();
  const op = (upper.startsWith("C-") ? upper : `C-${upper}`) as DimseOperation;
  return OPERATIONS.includes(op) ? op : undefined;
}

function badRequest(message: string): GatewayError {
  return new GatewayError(400, "invalid_dicom_request", message);
}

/** The identifier carried by the body (DICOM JSON object), or `{}`. */
async function bodyIdentifier(req: RequestEnvelope): Promise<DicomJson> {
  // A DIMSE identifier's type is known JSON: no media type parsed per operation.
  const body = req.body;
  if (body.isEmpty || (body.contentType !== DICOM_JSON && body.format !== "json")) return {};
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

/** What every path of PATHS, WHOLE_RENDERINGS and bulk data starts with. */
const DICOMWEB_ROOTS = ["/studies", "/series", "/instances", "/bulkdata/"];

/** A DICOMweb-shaped path: what it asks for. */
interface PathMatch {
  kind: "find" | "retrieve";
  level: QrLevel;
  uids: PathUids;
  output: RetrieveOutput;
}

/** Match a path (400 for a malformed frame list, 404 for a bulk data path never emitted). */
function matchPath(path: string): PathMatch | undefined {
  // Every DICOMweb path starts so; a DIMSE envelope's (`/C-FIND`) is not tried on each pattern.
  if (!DICOMWEB_ROOTS.some((root) => path.startsWith(root))) return undefined;
  if (path.startsWith("/bulkdata/")) {
    const ref = parseBulkDataPath(path);
    if (!ref) throw new GatewayError(404, "not_found", `no bulk data at ${path}`);
    return {
      kind: "retrieve",
      level: "IMAGE",
      uids: { study: ref.study, series: ref.series, instance: ref.instance },
      output: { kind: "bulkdata", tagPath: ref.tagPath },
    };
  }
  if (WHOLE_RENDERINGS.test(path)) {
    throw new GatewayError(
      501,
      "not_implemented",
      "the dicom_scu bridge renders one instance or frame at a time: ask for " +
        ".../instances/{instance}/rendered, .../frames/{frame}/rendered or their /thumbnail",
    );
  }
  for (const p of PATHS) {
    const m = p.re.exec(path);
    if (!m) continue;
    const [, study, series, instance, frameList] = m;
    let output: RetrieveOutput = { kind: p.output === "metadata" ? "metadata" : "instances" };
    const frames = () => {
      try {
        return parseFrameList(frameList);
      } catch (err) {
        if (err instanceof FrameListError) throw badRequest(err.message);
        throw err;
      }
    };
    if (p.output === "frames") output = { kind: "frames", frames: frames() };
    if (p.output === "rendered" || p.output === "thumbnail") {
      const list = frameList === undefined ? [1] : frames();
      if (list.length !== 1) {
        throw new GatewayError(
          406,
          "not_acceptable",
          `rendering ${list.length} frames at once (a video or a multipart of images) is not ` +
            "supported: ask for one frame",
        );
      }
      output = { kind: "rendered", frame: list[0], thumbnail: p.output === "thumbnail" };
    }
    return { kind: p.kind, level: p.level, uids: { study, series, instance }, output };
  }
  return undefined;
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
  const path = req.path.endsWith("/") ? req.path.replace(/\/+$/, "") || "/" : req.path || "/";
  const route = matchPath(path);

  if (!op) {
    if (path === "/echo") op = "C-ECHO";
    else if (
      (req.method === "POST" || req.method === "PUT") && /^\/studies(\/[0-9.]+)?$/.test(path)
    ) {
      op = "C-STORE";
    } else if ((req.method === "GET" || req.method === "HEAD") && route) {
      op = route.kind === "find" ? "C-FIND" : retrieveMode === "move" ? "C-MOVE" : "C-GET";
    } else {
      throw badRequest(
        `no DIMSE operation for ${req.method} ${path}: set metadata dicom_operation or use a DICOMweb-style path`,
      );
    }
  }
  if (op === "C-ECHO" || op === "C-STORE") return { op };

  const base = await bodyIdentifier(req);
  const uids: PathUids = route?.uids ?? {};
  // Read without a look at a DIMSE caller's lazy identifier (sent on as its bytes if untouched).
  const stated = peekElement(base, 0x00080052, "00080052");
  const level = levelOverride ?? route?.level ??
    levelOf(stated ? { "00080052": stated } : {}) ?? "STUDY";
  if (!LEVELS.includes(level)) {
    throw badRequest(`unknown query/retrieve level \`${level}\``);
  }
  if (op === "C-FIND") {
    try {
      const query: DicomQuery = req.protocol === "dimse" && !route
        ? { level, identifier: base, offset: 0, fuzzy: false, includeAll: true }
        : buildQuery(
          level,
          req.protocol === "dimse" ? new URLSearchParams() : req.query,
          uids,
          base,
        );
      // A Modality Worklist C-FIND (its identifiers have no level) asks the PACS's worklist; the
      // query/retrieve models stay chosen by level.
      if (req.metadata.dicom_sop_class === SOP.modalityWorklistFind) {
        query.model = SOP.modalityWorklistFind;
      }
      return { op, query };
    } catch (err) {
      throw badRequest((err as Error).message);
    }
  }
  const identifier: DicomJson = { ...base, "00080052": { vr: "CS", Value: [level] } };
  if (uids.study) identifier["0020000D"] = { vr: "UI", Value: [uids.study] };
  if (uids.series) identifier["0020000E"] = { vr: "UI", Value: [uids.series] };
  if (uids.instance) identifier["00080018"] = { vr: "UI", Value: [uids.instance] };
  return { op, level, identifier, output: route?.output ?? { kind: "instances" } };
}
