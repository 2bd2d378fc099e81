/**
 * DIMSE operations as RequestEnvelopes. Every envelope has protocol `dimse`, method = the operation
 * (`C-ECHO`, `C-FIND`, `C-GET`, `C-MOVE`, `C-STORE`), path `/<operation>`, and metadata:
 * `endpoint`, `service` (`dicom_scp`), `dicom_operation`, `calling_aet`, `called_aet`,
 * `remote_addr`, `dicom_sop_class`, `dicom_message_id`, plus `dicom_level` (C-FIND/GET/MOVE),
 * `dicom_move_destination` (C-MOVE) and for C-STORE `dicom_transfer_syntax`,
 * `dicom_study_uid`, `dicom_series_uid`, `dicom_instance_uid`, `dicom_patient_id`, `dicom_modality`.
 * The body is the identifier as DICOM JSON (`application/dicom+json`) or, for C-STORE, the Part 10
 * file (`application/dicom`; `data()` gives the header as DICOM JSON).
 */
import { type IdentityKeyword, peekElement, type RawDataset } from "../../adapters/dimse/mod.ts";
import { type DicomJson, type DicomJsonElement, levelOf } from "../../dicom/mod.ts";
import { Body, RequestEnvelope } from "../../envelope.ts";

/** The headers of every DIMSE envelope (read-only: `headers` gives a request its own copy). */
const NO_HEADERS = new Headers();

/** Who is on the other side of an association. */
export interface Peer {
  callingAet: string;
  calledAet: string;
  remoteAddr?: string;
}

/**
 * The common part of an operation's envelope; `messageId`, when given, is `dicom_message_id`
 * (before `extra`). The metadata is built in one object (no spreads: one per DIMSE operation).
 */
export function dimseEnvelope(
  endpoint: string,
  op: string,
  peer: Peer,
  extra: Record<string, string>,
  body: Body,
  signal: AbortSignal,
  messageId?: number,
): RequestEnvelope {
  const path = `/${op}`;
  const metadata: Record<string, string> = {
    endpoint,
    service: "dicom_scp",
    method: op,
    path,
    dicom_operation: op,
    calling_aet: peer.callingAet,
    called_aet: peer.calledAet,
  };
  if (peer.remoteAddr) metadata.remote_addr = peer.remoteAddr;
  if (messageId !== undefined) metadata.dicom_message_id = String(messageId);
  for (const key in extra) metadata[key] = extra[key];
  return new RequestEnvelope({
    id: crypto.randomUUID(),
    protocol: "dimse",
    method: op,
    path,
    // A DIMSE operation has no headers: one empty set for all, copied if anyone writes to it.
    headers: NO_HEADERS,
    headersWritable: false,
    metadata,
    body,
    endpoint,
    remoteAddr: peer.remoteAddr,
    signal,
  });
}

/** An identifier (C-FIND/GET/MOVE) as a JSON body, kept as data (serialized only if read). */
export function identifierBody(identifier: DicomJson): Body {
  return Body.fromData(identifier, "application/dicom+json");
}

/**
 * Metadata describing an identifier's level, added to `into` when given. Read without a look at
 * a lazy identifier (adapters/dimse/lazy_json.ts): untouched, it is forwarded as its bytes.
 * `element`, when the caller has it, is the identifier's level element (levelElement).
 */
export function levelMetadata(
  identifier: DicomJson,
  into: Record<string, string> = {},
  element: DicomJsonElement | undefined = levelElement(identifier),
): Record<string, string> {
  const level = levelOf(element ? { "00080052": element } : {});
  if (level) into.dicom_level = level;
  return into;
}

/** An identifier's Query/Retrieve Level element, for reading (see levelMetadata). */
export function levelElement(identifier: DicomJson): DicomJsonElement | undefined {
  return peekElement(identifier, 0x00080052, "00080052");
}

/** Metadata describing a received instance, from its identity elements. */
export function instanceMetadata(dataset: RawDataset): Record<string, string> {
  const id = dataset.identity();
  const out: Record<string, string> = {};
  const pairs: [string, IdentityKeyword][] = [
    ["dicom_study_uid", "StudyInstanceUID"],
    ["dicom_series_uid", "SeriesInstanceUID"],
    ["dicom_instance_uid", "SOPInstanceUID"],
    ["dicom_patient_id", "PatientID"],
    ["dicom_modality", "Modality"],
  ];
  for (const [key, keyword] of pairs) {
    const v = id[keyword];
    if (v) out[key] = v;
  }
  return out;
}
