/**
 * The presentation contexts a C-GET proposes. The gateway does not transcode, so a retrieval
 * offers the PACS the compressed syntaxes the request can take the data in, besides the
 * uncompressed ones (always proposed):
 * - frames and pixel bulk data: the syntaxes the Accept header allows (gateway/dicom/pixel_media.ts;
 *   no Accept: all); other bulk data and metadata: all;
 * - instances: the `transfer-syntax` values of the Accept ranges for `application/dicom` (`*`, a
 *   wildcard range or no Accept: all; absent on `application/dicom`, PS3.18's Explicit VR Little
 *   Endian default, or only uncompressed ones named: none, so a PACS that can decompresses);
 * - rendered and thumbnail: those the renderer decodes (JPEG baseline and lossless);
 * - DIMSE callers (a dicom_scp endpoint in front): all.
 * "All" is the backend's `retrieve_transfer_syntaxes` for its `retrieve_sop_classes`; every
 * storage class of the catalog (and every listed one) gets an uncompressed context. With
 * `retrieve_sop_class_lookup` (the default), a retrieval whose classes the PACS names
 * (sop_class_lookup.ts) offers those classes alone, in every compressed syntax the gateway knows
 * (or those the PACS says it holds) that the request can take. The contexts are laid out by
 * retrieveContexts (adapters/dimse/storage_classes.ts) within the 128-context budget.
 */
import {
  COMPRESSED_SYNTAXES,
  compressedSyntaxUid,
  storageClassUid,
} from "../../../shared/gateway_config/mod.ts";
import {
  MAX_PRESENTATION_CONTEXTS,
  uncompressedClasses,
} from "../../../shared/gateway_config/mod.ts";
import { type ProposedContext, retrieveContexts } from "../../adapters/dimse/mod.ts";
import { parseMediaType } from "../../codecs/mod.ts";
import { isEncapsulated, negotiate, offerOf, SOP, UNCOMPRESSED } from "../../dicom/mod.ts";
import { RENDERABLE_COMPRESSED } from "../../dicom/render/mod.ts";
import type { RequestEnvelope } from "../../envelope.ts";
import type { GetPlan, Session } from "./get_passes.ts";
import type { DicomCall, RetrieveOutput } from "./operation.ts";
import { retrieveModel } from "./retrieve.ts";
import { lookupIdentifier, lookupSopClasses, type RetrievalClasses } from "./sop_class_lookup.ts";

/** Every compressed syntax the gateway knows (a proposal narrowed to one class offers them all). */
export const ALL_COMPRESSED: readonly string[] = Object.values(COMPRESSED_SYNTAXES);

/** Pixel data elements: their bulk data is sent as frames, in the instance's syntax. */
const PIXEL_TAGS = new Set(["7FE00010", "7FE00008", "7FE00009"]);

/** The backend's retrieval options as UIDs. */
export interface RetrieveSettings {
  sopClasses: string[];
  transferSyntaxes: string[];
}

/** Resolve the validated keyword-or-UID lists of the options. */
export function retrieveSettings(o: {
  retrieve_sop_classes: string[];
  retrieve_transfer_syntaxes: string[];
}): RetrieveSettings {
  return {
    sopClasses: o.retrieve_sop_classes.map((n) => storageClassUid(n)!),
    transferSyntaxes: o.retrieve_transfer_syntaxes.map((n) => compressedSyntaxUid(n)!),
  };
}

/** Split an Accept header at commas outside quoted strings. */
function acceptRanges(accept: string): string[] {
  const out: string[] = [];
  let quoted = false;
  let start = 0;
  for (let i = 0; i < accept.length; i++) {
    if (accept[i] === '"') quoted = !quoted;
    else if (accept[i] === "," && !quoted) {
      out.push(accept.slice(start, i));
      start = i + 1;
    }
  }
  out.push(accept.slice(start));
  return out.map((r) => r.trim()).filter((r) => r !== "");
}

/** Of `syntaxes`, those an instance retrieval's Accept names for `application/dicom`. */
function instanceSyntaxes(accept: string, syntaxes: readonly string[]): string[] {
  const named = new Set<string>();
  let aboutDicom = false;
  for (const range of acceptRanges(accept)) {
    const mt = parseMediaType(range);
    if (!mt || !(Number(mt.params.q ?? "1") > 0)) continue;
    const inner = mt.type === "multipart/related"
      ? (mt.params.type ?? "*/*").toLowerCase()
      : mt.type;
    if (!["application/dicom", "application/*", "*/*", "*"].includes(inner.trim())) continue;
    aboutDicom = true;
    const ts = mt.params["transfer-syntax"]?.trim();
    // PS3.18 §8.7.3.5: `application/dicom` without a transfer-syntax means Explicit VR Little
    // Endian (proposing only uncompressed contexts asks the PACS to decompress); a wildcard
    // range states no preference, so the data may come as stored.
    if (ts === undefined && inner.trim() === "application/dicom") continue;
    if (ts === undefined || ts === "*") return [...syntaxes];
    named.add(ts);
  }
  return aboutDicom ? syntaxes.filter((ts) => named.has(ts)) : [...syntaxes];
}

/** Of `syntaxes`, those the request can take the retrieved data in, as stored. */
export function acceptableSyntaxes(
  req: RequestEnvelope,
  output: RetrieveOutput,
  syntaxes: readonly string[],
): string[] {
  // A rendering: only what the renderer decodes; a PACS that can decompresses the rest for it.
  if (output.kind === "rendered") {
    return syntaxes.filter((ts) => RENDERABLE_COMPRESSED.includes(ts));
  }
  const accept = req.protocol === "dimse" ? null : req.readHeaders.get("accept");
  if (accept === null) return [...syntaxes];
  switch (output.kind) {
    case "metadata":
      return [...syntaxes];
    case "instances":
      return instanceSyntaxes(accept, syntaxes);
    case "bulkdata":
      if (!PIXEL_TAGS.has(output.tagPath)) return [...syntaxes];
      return syntaxes.filter((ts) => negotiate(accept, offerOf(ts, true), 1) !== undefined);
    case "frames": {
      const parts = output.frames.length;
      return syntaxes.filter((ts) => negotiate(accept, offerOf(ts, true), parts) !== undefined);
    }
  }
}

/**
 * The contexts of a C-GET with the query/retrieve `model`: uncompressed contexts for `classes`
 * (default: the catalog's and `compressedClasses`), then the compressed `syntaxes` for
 * `compressedClasses`, within the association's 128.
 */
export function getContexts(
  model: string,
  compressedClasses: readonly string[],
  syntaxes: readonly string[],
  classes: readonly string[] = uncompressedClasses(compressedClasses),
): ProposedContext[] {
  return [
    { abstractSyntax: model, transferSyntaxes: UNCOMPRESSED },
    ...retrieveContexts({
      classes,
      compressedClasses,
      compressedSyntaxes: syntaxes,
      budget: MAX_PRESENTATION_CONTEXTS - 1,
    }),
  ];
}

/** What the PACS says of the instances retrieved (module comment), or undefined. */
async function lookup(
  session: Session,
  dc: Extract<DicomCall, { op: "C-GET" | "C-MOVE" }>,
  log: (msg: string, fields: Record<string, unknown>) => void,
): Promise<RetrievalClasses | undefined> {
  if (!lookupIdentifier(dc.level, dc.identifier)) return undefined;
  try {
    const found = await session(
      [{ abstractSyntax: SOP.studyRootFind, transferSyntaxes: UNCOMPRESSED }],
      (a) => lookupSopClasses(a, dc.level, dc.identifier),
    );
    log("dicom_scu SOP class lookup", {
      level: dc.level,
      sop_classes: found?.classes ?? null,
      transfer_syntaxes: found?.transferSyntaxes ?? null,
    });
    return found;
  } catch (err) {
    log("dicom_scu SOP class lookup failed", { level: dc.level, error: (err as Error).message });
    return undefined;
  }
}

/**
 * The proposal for the classes a lookup found: each uncompressed, and in the compressed syntaxes
 * the instances are held in (when the PACS said) or else every one the gateway knows, narrowed to
 * what the request accepts. When that does not fit in one association, the configured syntaxes;
 * past that retrieveContexts keeps the most frequent classes' compressed contexts.
 */
function foundPlan(
  req: RequestEnvelope,
  dc: Extract<DicomCall, { op: "C-GET" | "C-MOVE" }>,
  settings: RetrieveSettings,
  found: RetrievalClasses,
): GetPlan {
  const model = retrieveModel("get", dc.level);
  const offered = found.transferSyntaxes?.filter(isEncapsulated) ?? ALL_COMPRESSED;
  let syntaxes = acceptableSyntaxes(req, dc.output, offered);
  const classes = found.classes;
  if (classes.length * (syntaxes.length + 1) + 1 > MAX_PRESENTATION_CONTEXTS) {
    const configured = acceptableSyntaxes(req, dc.output, settings.transferSyntaxes);
    syntaxes = found.transferSyntaxes
      ? configured.filter((ts) => found.transferSyntaxes!.includes(ts))
      : configured;
  }
  return { contexts: getContexts(model, classes, syntaxes, classes), syntaxes, classes };
}

/** The C-GET plan of a retrieval (module comment); `lookup`: the session to ask the PACS on. */
export async function planGet(
  req: RequestEnvelope,
  dc: Extract<DicomCall, { op: "C-GET" | "C-MOVE" }>,
  settings: RetrieveSettings,
  opts: { lookup?: Session; log: (msg: string, fields: Record<string, unknown>) => void },
): Promise<GetPlan> {
  const found = opts.lookup ? await lookup(opts.lookup, dc, opts.log) : undefined;
  if (found) return foundPlan(req, dc, settings, found);
  const model = retrieveModel("get", dc.level);
  const syntaxes = acceptableSyntaxes(req, dc.output, settings.transferSyntaxes);
  const contexts = getContexts(model, settings.sopClasses, syntaxes);
  return { contexts, syntaxes, classes: uncompressedClasses(settings.sopClasses) };
}
