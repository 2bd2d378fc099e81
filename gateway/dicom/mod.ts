/**
 * Shared DICOM helpers: DICOM JSON, Part 10 files, dictionary, UIDs, statuses, multipart, frames,
 * bulk data references and the media types of frames and bulk data.
 *
 * @example
 * ```ts
 * import {
 *   boundaryOf,
 *   decodeMultipart,
 *   encodeMultipart,
 *   newBoundary,
 *   relatedContentType,
 *   statusName,
 * } from "./mod.ts";
 *
 * const boundary = newBoundary();
 * const body = encodeMultipart([{ contentType: "application/dicom", body: new Uint8Array(8) }], boundary);
 * const parts = decodeMultipart(body, boundaryOf(relatedContentType(boundary))!);
 * console.log(parts.length, parts[0].headers.get("content-type")); // 1 application/dicom
 * console.log(statusName(0xa700)); // Refused: out of resources
 * ```
 *
 * @module
 */
export { keywordOf, tagOf, vrOf } from "./dictionary.ts";
export {
  ITEM_END_TAG,
  ITEM_TAG,
  LONG_VRS,
  MAX_SEQUENCE_DEPTH,
  SEQUENCE_END_TAG,
  sequenceDepth,
  UNDEFINED_LENGTH,
} from "./nesting.ts";
export {
  type DcmjsDict,
  type DicomJson,
  type DicomJsonElement,
  fromBase64,
  fromDicomJson,
  jsonString,
  readDataset,
  toBase64,
  toDicomJson,
  type ToJsonOptions,
  writeDataset,
} from "./json.ts";
export {
  boundaryOf,
  decodeMultipart,
  encodeMultipart,
  newBoundary,
  type Part,
  relatedContentType,
} from "./multipart.ts";
export {
  IMPLEMENTATION_CLASS_UID,
  IMPLEMENTATION_VERSION,
  isP10,
  type P10File,
  p10Header,
  type P10Meta,
  parseP10,
  writeP10,
} from "./p10.ts";
export {
  parseStatus,
  STATUS,
  statusHex,
  type StatusKind,
  statusKind,
  statusName,
} from "./status/mod.ts";
export {
  isEncapsulated,
  isStorageClass,
  newUid,
  QR_CLASSES,
  SOP,
  TS,
  UNCOMPRESSED,
} from "./uids.ts";
export {
  buildQuery,
  DEFAULT_RETURN_KEYS,
  defaultReturnKeys,
  type DicomQuery,
  levelOf,
  type QrLevel,
} from "./query.ts";
export {
  attributeLevel,
  type HierarchicalSplit,
  inheritFrom,
  splitHierarchical,
} from "./query_levels.ts";
export { instanceFromJson, instancesOfBody, studyAndSeriesOf } from "./instances.ts";
export { DicomBody } from "./body.ts";
export {
  FrameListError,
  parseFrameList,
  PixelDataError,
  type PixelFrames,
  pixelFramesOf,
  pixelFramesOfDataset,
} from "./frames.ts";
export {
  describeOffer,
  mayAccept,
  negotiate,
  OCTET_STREAM,
  offerOf,
  partContentType,
  type PixelOffer,
  type Representation,
} from "./pixel_media.ts";
export { bulkDataPath, type BulkDataRef, bulkValue, parseBulkDataPath } from "./bulkdata.ts";
