/**
 * The identifying metadata of a tracked message, and the search aliases over it: `patient_id`
 * finds a DICOM PatientID, an HL7 PID-3 or a FHIR Patient id alike.
 */

/** Search aliases and the metadata keys each one looks in. */
export const SEARCH_ALIASES: Readonly<Record<string, readonly string[]>> = {
  patient_id: ["patient_id", "dicom_patient_id"],
  accession: ["accession", "dicom_accession_number"],
  study_uid: ["dicom_study_uid"],
  series_uid: ["dicom_series_uid"],
  sop_uid: ["dicom_instance_uid"],
  control_id: ["hl7.control_id"],
  message_type: ["hl7.message_type"],
  calling_aet: ["calling_aet"],
  subject: ["auth.subject"],
  delivery_id: ["delivery_id"],
  fhir_type: ["fhir.resource_type"],
  fhir_id: ["fhir.id"],
};

/** The metadata keys a search key looks in. */
export function aliasKeys(key: string): readonly string[] {
  return SEARCH_ALIASES[key] ?? [key];
}

/** Keys never kept in a record's metadata (they repeat the record's columns or are volatile). */
const SKIPPED = new Set(["endpoint", "method", "path", "service", "ts"]);

/** Longest metadata value kept. */
const MAX_VALUE = 1024;

/** The record's metadata: the request's, without the columns, each value bounded. */
export function keptMetadata(metadata: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  let n = 0;
  for (const key in metadata) {
    if (SKIPPED.has(key)) continue;
    const v = metadata[key];
    if (typeof v !== "string") continue;
    out[key] = v.length > MAX_VALUE ? v.slice(0, MAX_VALUE) : v;
    if (++n >= 128) break;
  }
  return out;
}

const FHIR_TYPE = /^[A-Z][A-Za-z]{1,63}$/;
const FHIR_ID = /^[A-Za-z0-9\-.]{1,64}$/;
const UID = /^[0-9.]{1,64}$/;

/**
 * Fields derived from the request itself, for search: FHIR `type/id` from a FHIR endpoint's
 * path, DICOMweb study/series/instance UIDs from the path, an HL7 message's PID-3 (patient id)
 * and ORC-3/OBR-3 (filler order number, the accession) from its text.
 */
export function derivedFields(
  service: string | undefined,
  path: string,
  hl7Text: string | undefined,
): Record<string, string> {
  const out: Record<string, string> = {};
  const parts = path.split("/").filter((p) => p !== "");
  if (service === "fhir" && parts.length > 0 && FHIR_TYPE.test(parts[0])) {
    out["fhir.resource_type"] = parts[0];
    if (parts[1] && FHIR_ID.test(parts[1]) && !parts[1].startsWith("_")) {
      out["fhir.id"] = parts[1];
      if (parts[0] === "Patient") out.patient_id = parts[1];
    }
  }
  if (service === "dicomweb") {
    const at = (name: string) => {
      const i = parts.indexOf(name);
      return i >= 0 && parts[i + 1] && UID.test(parts[i + 1]) ? parts[i + 1] : undefined;
    };
    const study = at("studies"), series = at("series"), instance = at("instances");
    if (study) out.dicom_study_uid = study;
    if (series) out.dicom_series_uid = series;
    if (instance) out.dicom_instance_uid = instance;
  }
  if (hl7Text !== undefined) Object.assign(out, hl7Fields(hl7Text));
  return out;
}

/** PID-3's first identifier and the accession (OBR-3, else ORC-3) of an HL7 v2 message. */
export function hl7Fields(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  const field = text.startsWith("MSH") ? text[3] : "|";
  const component = text.startsWith("MSH") ? text[4] ?? "^" : "^";
  // Bounded: the first 200 segments are enough for the identifying ones.
  const segments = text.split(/\r\n|\r|\n/, 200);
  for (const seg of segments) {
    const name = seg.slice(0, 3);
    if (name === "PID" && out.patient_id === undefined) {
      const v = seg.split(field)[3]?.split("~")[0]?.split(component)[0];
      if (v) out.patient_id = v.slice(0, 64);
    } else if ((name === "OBR" || name === "ORC") && out.accession === undefined) {
      const v = seg.split(field)[3]?.split(component)[0];
      if (v) out.accession = v.slice(0, 64);
    }
  }
  return out;
}
