/**
 * Audit records as FHIR R4 `AuditEvent` resources (https://hl7.org/fhir/R4/auditevent.html), in
 * `batch` Bundles for a FHIR server. REST requests are typed `rest` with the FHIR interaction as
 * subtype; DIMSE operations take the DICOM audit event types (PS3.15 A.5, DCM codes).
 */
import type { AuditEntry } from "./entry.ts";

const DCM = "http://dicom.nema.org/resources/ontology/DCM";
const EVENT_TYPE = "http://terminology.hl7.org/CodeSystem/audit-event-type";
const RESTFUL_INTERACTION = "http://hl7.org/fhir/restful-interaction";
const SOURCE_TYPE = "http://terminology.hl7.org/CodeSystem/security-source-type";
const ENTITY_TYPE = "http://terminology.hl7.org/CodeSystem/audit-entity-type";

/** A FHIR resource as JSON. */
export type FhirResource = Record<string, unknown>;

/** DICOM audit event types by DIMSE operation. */
const DIMSE_TYPES: Record<string, { code: string; display: string }> = {
  "C-STORE": { code: "110104", display: "DICOM Instances Transferred" },
  "C-MOVE": { code: "110104", display: "DICOM Instances Transferred" },
  "C-GET": { code: "110104", display: "DICOM Instances Transferred" },
  "C-FIND": { code: "110112", display: "Query" },
};

/** AuditEvent.action (C, R, U, D, E) of a FHIR interaction, HTTP method or DIMSE operation. */
function actionOf(entry: AuditEntry): string {
  // An HL7 v2 message received: its data enters through the gateway.
  if (entry.protocol === "mllp") return "C";
  switch (entry.fhir_interaction) {
    case "read":
    case "vread":
    case "history":
    case "capabilities":
      return "R";
    case "create":
      return "C";
    case "update":
    case "patch":
      return "U";
    case "delete":
      return "D";
    case "search":
    case "batch":
    case "operation":
      return "E";
  }
  switch (entry.method) {
    case "GET":
    case "HEAD":
    case "C-MOVE":
    case "C-GET":
      return "R";
    case "POST":
    case "C-STORE":
      return "C";
    case "PUT":
    case "PATCH":
      return "U";
    case "DELETE":
      return "D";
    default:
      return "E";
  }
}

function base64(text: string): string {
  const bytes = new TextEncoder().encode(text);
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary);
}

/** The entities a record names: the FHIR resource or the DICOM instance and study, the request. */
function entitiesOf(entry: AuditEntry): FhirResource[] {
  const out: FhirResource[] = [];
  const object = { system: ENTITY_TYPE, code: "2", display: "System Object" };
  if (entry.fhir_resource_type) {
    out.push({
      what: entry.fhir_id
        ? { reference: `${entry.fhir_resource_type}/${entry.fhir_id}` }
        : { display: entry.fhir_resource_type },
      type: object,
      ...(entry.fhir_interaction === "search" && entry.query
        ? { query: base64(entry.query.slice(1)) }
        : {}),
    });
  }
  if (entry.dicom_sop_instance) {
    out.push({
      what: {
        identifier: { system: "urn:dicom:uid", value: `urn:oid:${entry.dicom_sop_instance}` },
      },
      type: object,
      name: "SOP Instance",
    });
  }
  if (entry.dicom_study_uid) {
    out.push({
      what: { identifier: { system: "urn:dicom:uid", value: `urn:oid:${entry.dicom_study_uid}` } },
      type: object,
      name: "Study",
    });
  }
  const detail = [
    ["request_id", entry.request_id],
    ["pipeline", entry.pipeline],
    ["endpoint", entry.endpoint],
    [
      "status",
      entry.dicom_status ?? (entry.status === undefined ? undefined : String(entry.status)),
    ],
    ["error_code", entry.error_code],
    ["hl7_ack_code", entry.hl7_ack_code],
  ].filter(([, v]) => v !== undefined).map(([type, v]) => ({ type, valueString: v }));
  out.push({
    ...(entry.request_id ? { what: { identifier: { value: entry.request_id } } } : {}),
    name: "request",
    description: entry.protocol === "dimse"
      ? `${entry.method ?? "DIMSE"}${entry.dicom_sop_class ? " " + entry.dicom_sop_class : ""}`
      : entry.protocol === "mllp"
      ? `HL7 ${entry.method ?? "message"}${
        entry.hl7_control_id ? " control id " + entry.hl7_control_id : ""
      }`
      : `${entry.method ?? ""} ${entry.path ?? ""}${entry.query ?? ""}`.trim(),
    detail,
  });
  return out;
}

/** The AuditEvent of one record; `observer` names this gateway. */
export function auditEventOf(entry: AuditEntry, observer: string): FhirResource {
  if (entry.event === "audit.dropped" || entry.event === "audit.gap") {
    return {
      resourceType: "AuditEvent",
      type: { system: DCM, code: "110100", display: "Application Activity" },
      action: "E",
      recorded: entry.time,
      outcome: "8",
      outcomeDesc: entry.event === "audit.gap"
        ? `the gateway did not stop cleanly after ${entry.stopped_after ?? "an unknown time"}; ` +
          `audit records after seq ${entry.last_seq} may be missing (durability ${entry.durability})`
        : `${entry.dropped} audit records were lost (${entry.reason})`,
      agent: [{ who: { display: observer }, requestor: false }],
      source: sourceOf(observer),
    };
  }
  const dimse = entry.protocol === "dimse";
  // An HL7 v2 message received over MLLP: data imported from the sending facility.
  const mllp = entry.protocol === "mllp";
  const dicomType = dimse ? DIMSE_TYPES[entry.method ?? ""] : undefined;
  const type = dimse
    ? { system: DCM, ...(dicomType ?? { code: "110100", display: "Application Activity" }) }
    : mllp
    ? { system: DCM, code: "110107", display: "Import" }
    : { system: EVENT_TYPE, code: "rest", display: "RESTful Operation" };
  const anonymous = dimse
    ? entry.dicom_calling_aet ?? "unknown AE"
    : mllp
    ? entry.hl7_sending_facility ?? "unknown HL7 sender"
    : "unauthenticated client";
  const requestor: FhirResource = {
    who: entry.subject
      ? { identifier: { value: entry.subject }, display: entry.subject }
      : { display: anonymous },
    requestor: true,
  };
  if (entry.client_id) requestor.altId = entry.client_id;
  if (dimse && entry.dicom_calling_aet) requestor.name = entry.dicom_calling_aet;
  const address = entry.client_ip ?? entry.client_address;
  if (address) requestor.network = { address, type: "2" };
  const outcome = entry.outcome === "success" ? "0" : entry.outcome === "failure" ? "4" : "8";
  return {
    resourceType: "AuditEvent",
    type,
    ...(entry.fhir_interaction
      ? { subtype: [{ system: RESTFUL_INTERACTION, code: entry.fhir_interaction }] }
      : {}),
    action: actionOf(entry),
    recorded: entry.time,
    outcome,
    ...(outcome === "0" ? {} : {
      outcomeDesc: `${entry.dicom_status ?? entry.status}${
        entry.error_code ? " " + entry.error_code : ""
      }`,
    }),
    agent: [
      requestor,
      {
        who: { display: observer },
        ...(dimse && entry.dicom_called_aet ? { name: entry.dicom_called_aet } : {}),
        requestor: false,
      },
    ],
    source: sourceOf(observer),
    entity: entitiesOf(entry),
  };
}

function sourceOf(observer: string): FhirResource {
  return {
    observer: { display: observer },
    type: [{ system: SOURCE_TYPE, code: "4", display: "Application Server" }],
  };
}

/** A `batch` Bundle creating `events`. */
export function batchBundle(events: FhirResource[]): FhirResource {
  return {
    resourceType: "Bundle",
    type: "batch",
    entry: events.map((resource) => ({ resource, request: { method: "POST", url: "AuditEvent" } })),
  };
}
