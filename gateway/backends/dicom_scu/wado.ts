/**
 * WADO-RS answers made from retrieved instances: the instances (multipart/related of Part 10
 * files), DICOM JSON metadata (large binary values as BulkDataURIs), frames of one instance and
 * bulk data values. Frames and bulk data are sent as
 * stored (no transcoding), labelled and negotiated as gateway/dicom/pixel_media.ts describes:
 * 404 for a frame beyond NumberOfFrames or a value that is not there, 406 when the Accept header
 * allows nothing the data can be sent as, 502 `invalid_dicom_instance` for pixel data that cannot
 * be cut into frames. `/rendered` and `/thumbnail` answer one frame rendered as an image.
 */
import {
  bulkDataPath,
  bulkValue,
  type DcmjsDict,
  describeOffer,
  encodeMultipart,
  mayAccept,
  negotiate,
  newBoundary,
  offerOf,
  parseP10,
  partContentType,
  PixelDataError,
  type PixelFrames,
  pixelFramesOfDataset,
  readDataset,
  relatedContentType,
  toDicomJson,
  TS,
} from "../../dicom/mod.ts";
import { imageAttributesOf, renderInWorker, renderParamsOf } from "../../dicom/render/mod.ts";
import { Body, type RequestEnvelope, ResponseEnvelope } from "../../envelope.ts";
import { causedError, GatewayError } from "../../errors.ts";
import type { RetrieveOutput } from "./operation.ts";

/** Binary values up to this size are inline in metadata; larger ones get a BulkDataURI. */
const INLINE_LIMIT = 1024;

/** Pixel data elements (frames come from these; their bulk data is the frames). */
const PIXEL_TAGS = new Set(["7FE00010", "7FE00008", "7FE00009"]);

function uid(dict: DcmjsDict, tag: string): string | undefined {
  const v = dict[tag]?.Value?.[0];
  return typeof v === "string" && v.trim() ? v.replace(/\0/g, "").trim() : undefined;
}

/**
 * The absolute URL of the DICOMweb root a request came in under (`http://gw/dicomweb`), when the
 * request is HTTP and its path still ends with the endpoint-relative path; else undefined.
 */
function dicomwebBase(req: RequestEnvelope): string | undefined {
  if (req.protocol === "dimse" || !req.host || !req.originalPath.endsWith(req.path)) {
    return undefined;
  }
  const prefix = req.originalPath.slice(0, req.originalPath.length - req.path.length);
  return `${req.scheme}://${req.host}${prefix}`;
}

/** DICOM JSON of a retrieved file; with a `base`, large binary values carry BulkDataURIs. */
function metadataOf(file: Uint8Array, base: string | undefined) {
  const p10 = parseP10(file);
  const dict = readDataset(p10.dataset, p10.meta.transferSyntax);
  const study = uid(dict, "0020000D");
  const series = uid(dict, "0020000E");
  const instance = uid(dict, "00080018") ?? p10.meta.sopInstanceUid;
  const linkable = base !== undefined && study && series && instance;
  return toDicomJson(dict, {
    inlineLimit: INLINE_LIMIT,
    bulkDataUri: linkable
      ? (tagPath) => base + bulkDataPath({ study, series, instance, tagPath })
      : undefined,
  });
}

/** The retrieved file of `instanceUid` (the PACS may send others along), or 404. */
function fileOf(files: Uint8Array[], instanceUid: string | undefined): Uint8Array {
  const file = files.find((f) => parseP10(f).meta.sopInstanceUid === instanceUid) ?? files[0];
  if (!file) throw new GatewayError(404, "not_found", `no instance ${instanceUid ?? ""} found`);
  return file;
}

function datasetOf(file: Uint8Array): { dict: DcmjsDict; ts: string; uid: string } {
  const p10 = parseP10(file);
  if (p10.meta.transferSyntax === TS.deflatedLE) {
    throw new GatewayError(
      502,
      "invalid_dicom_instance",
      "frames and bulk data of Deflated Explicit VR Little Endian instances are not supported",
    );
  }
  return {
    dict: readDataset(p10.dataset, p10.meta.transferSyntax),
    ts: p10.meta.transferSyntax,
    uid: p10.meta.sopInstanceUid,
  };
}

function pixelsOf(dict: DcmjsDict, ts: string, uid: string): PixelFrames {
  let pixels: PixelFrames | undefined;
  try {
    pixels = pixelFramesOfDataset(dict, ts);
  } catch (err) {
    if (!(err instanceof PixelDataError)) throw err;
    throw causedError(502, "invalid_dicom_instance", `instance ${uid}: ${err.message}`, err);
  }
  if (!pixels) throw new GatewayError(404, "not_found", `instance ${uid} has no pixel data`);
  return pixels;
}

/** The response carrying `parts` in the representation negotiated for `accept`. */
function respond(
  parts: Uint8Array[],
  encapsulated: boolean,
  transferSyntax: string,
  accept: string | null,
): ResponseEnvelope {
  const offer = offerOf(transferSyntax, encapsulated);
  const rep = negotiate(accept, offer, parts.length);
  if (!rep) {
    throw new GatewayError(
      406,
      "not_acceptable",
      `Accept \`${accept}\` allows nothing this data can be sent as: ${describeOffer(offer)}`,
    );
  }
  const partType = partContentType(rep);
  if (rep.single) {
    const headers = new Headers({ "content-type": partType });
    return new ResponseEnvelope(200, headers, new Body(parts[0], partType));
  }
  const boundary = newBoundary();
  const type = relatedContentType(boundary, rep.type, { "transfer-syntax": rep.transferSyntax });
  const body = encodeMultipart(parts.map((p) => ({ contentType: partType, body: p })), boundary);
  return new ResponseEnvelope(200, new Headers({ "content-type": type }), new Body(body, type));
}

/** Frames `frames` (1-based) of the instance `instanceUid` among `files`. */
function framesResponse(
  files: Uint8Array[],
  instanceUid: string | undefined,
  frames: number[],
  accept: string | null,
): ResponseEnvelope {
  const { dict, ts, uid: sopUid } = datasetOf(fileOf(files, instanceUid));
  const pixels = pixelsOf(dict, ts, sopUid);
  const beyond = frames.find((n) => n > pixels.numberOfFrames);
  if (beyond !== undefined) {
    throw new GatewayError(
      404,
      "not_found",
      `frame ${beyond} does not exist: instance ${sopUid} has ${pixels.numberOfFrames} frame(s)`,
    );
  }
  return respond(frames.map((n) => pixels.frame(n)), pixels.encapsulated, ts, accept);
}

/**
 * The bulk data value at `tagPath` of the instance `instanceUid` among `files`. Encapsulated pixel
 * data is sent as its frames, one part each; any other value as one octet-stream part.
 */
function bulkDataResponse(
  files: Uint8Array[],
  instanceUid: string | undefined,
  tagPath: string,
  accept: string | null,
): ResponseEnvelope {
  const { dict, ts, uid: sopUid } = datasetOf(fileOf(files, instanceUid));
  if (ts === TS.explicitBE) {
    throw new GatewayError(
      501,
      "not_implemented",
      `bulk data of Explicit VR Big Endian (retired) instances is not supported: ${sopUid}`,
    );
  }
  if (PIXEL_TAGS.has(tagPath) && dict[tagPath]) {
    const pixels = pixelsOf(dict, ts, sopUid);
    if (pixels.encapsulated) {
      const all = Array.from({ length: pixels.numberOfFrames }, (_, i) => pixels.frame(i + 1));
      return respond(all, true, ts, accept);
    }
  }
  const value = bulkValue(dict, tagPath);
  if (!value) {
    throw new GatewayError(404, "not_found", `instance ${sopUid} has no bulk data at ${tagPath}`);
  }
  return respond([value], false, ts, accept);
}

/**
 * 406 at once when no stored data could be sent as the Accept header allows (frames and bulk
 * data), and 400/406 for the parameters of a rendering, before anything is retrieved.
 */
export function checkAcceptable(out: RetrieveOutput, req: RequestEnvelope): void {
  const accept = req.readHeaders.get("accept");
  if (out.kind === "rendered") {
    renderParamsOf(req.query, accept, out.thumbnail);
    return;
  }
  if (out.kind !== "frames" && out.kind !== "bulkdata") return;
  const parts = out.kind === "frames" ? out.frames.length : 1;
  if (mayAccept(accept, parts)) return;
  const what = out.kind === "frames" ? "frames" : "bulk data";
  throw new GatewayError(406, "not_acceptable", `Accept \`${accept}\` allows no ${what}`);
}

/**
 * Frame `frame` of the instance `instanceUid` among `files`, rendered (in a worker) as the
 * request's parameters ask: gateway/dicom/render.
 */
async function renderedResponse(
  files: Uint8Array[],
  instanceUid: string | undefined,
  out: Extract<RetrieveOutput, { kind: "rendered" }>,
  req: RequestEnvelope,
): Promise<ResponseEnvelope> {
  const params = renderParamsOf(req.query, req.readHeaders.get("accept"), out.thumbnail);
  const { dict, ts, uid: sopUid } = datasetOf(fileOf(files, instanceUid));
  const pixels = pixelsOf(dict, ts, sopUid);
  if (out.frame > pixels.numberOfFrames) {
    throw new GatewayError(
      404,
      "not_found",
      `frame ${out.frame} does not exist: instance ${sopUid} has ${pixels.numberOfFrames} frame(s)`,
    );
  }
  const bytes = await renderInWorker({
    frame: pixels.frame(out.frame),
    transferSyntax: ts,
    encapsulated: pixels.encapsulated,
    image: imageAttributesOf(dict),
    params,
  });
  const headers = new Headers({ "content-type": params.type });
  return new ResponseEnvelope(200, headers, new Body(bytes, params.type));
}

/** The answer of a retrieval, by what the request asked for (`out`). */
export async function retrievalResponse(
  files: Uint8Array[],
  out: RetrieveOutput,
  req: RequestEnvelope,
  instanceUid: string | undefined,
): Promise<ResponseEnvelope> {
  const accept = req.readHeaders.get("accept");
  switch (out.kind) {
    case "rendered":
      return await renderedResponse(files, instanceUid, out, req);
    case "metadata": {
      const base = dicomwebBase(req);
      const json = files.map((f) => metadataOf(f, base));
      return ResponseEnvelope.json(200, json, "application/dicom+json");
    }
    case "frames":
      return framesResponse(files, instanceUid, out.frames, accept);
    case "bulkdata":
      return bulkDataResponse(files, instanceUid, out.tagPath, accept);
    case "instances": {
      const boundary = newBoundary();
      const body = encodeMultipart(
        files.map((f) => ({ contentType: "application/dicom", body: f })),
        boundary,
      );
      const type = relatedContentType(boundary);
      return new ResponseEnvelope(200, new Headers({ "content-type": type }), new Body(body, type));
    }
  }
}
