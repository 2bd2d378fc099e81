/**
 * The DIMSE adapter: associations in (listener, negotiation) and out (SCU), raw datasets. The
 * DICOM upper layer (association PDUs, P-DATA, message exchange) is implemented here;
 * dcmjs-dimse's public classes are the message model and dcmjs the dataset codec.
 *
 * @example
 * ```ts
 * import { rejectText } from "./mod.ts";
 *
 * // An A-ASSOCIATE-RJ's source and reason, as the error message says them.
 * console.log(rejectText(1, 7)); // called AE title not recognized
 * ```
 *
 * @module
 */
export {
  type AbortSource,
  DimseError,
  type DimseErrorKind,
  type DimseTls,
  type ProposedContext,
  rejectText,
  ScuAssociation,
  type ScuOptions,
} from "./client.ts";
export { type ConnectionHandler, DimseConnection, type Reply } from "./connection.ts";
export {
  datasetJson,
  IDENTITY,
  type IdentityKeyword,
  JsonDataset,
  lazyDatasetJson,
  RawDataset,
} from "./dataset.ts";
export { holdsElement, lazyDicomJson, peekElement, untouched } from "./lazy_json.ts";
export {
  type CCancelRequest,
  type CEchoRequest,
  type CFindRequest,
  type CGetRequest,
  type CMoveRequest,
  type CStoreRequest,
  lib,
  type LibAssociation,
  type LibRequest,
  type LibResponse,
  newRequest,
} from "./dcmjs_dimse.ts";
export {
  type AcceptPolicy,
  type DimseService,
  negotiate,
  type Rejection,
  serviceOf,
} from "./negotiate.ts";
export { type FileSpool, SPOOL_SLICE } from "./instance_buffer.ts";
export { type HeaderScan, scanHeader } from "./header_scan.ts";
export { DimseListener, type DimseTlsServer, type ListenOptions } from "./server.ts";
export { retrieveContexts, type RetrievePlan, storeContexts } from "./storage_classes.ts";
