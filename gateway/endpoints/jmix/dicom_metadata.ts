/** JMIX `payload/metadata.json` from DICOM Part 10 files (header tags only; pixel data unread). */
import { GatewayError } from "../../errors.ts";
import type { JmixMetadata, JmixSeries, JmixStudy } from "../../../shared/jmix/mod.ts";
import { type DicomJson, jsonString, parseP10, readDataset, toDicomJson } from "../../dicom/mod.ts";

/** Tags read: PatientName, PatientID, PatientBirthDate, PatientSex, StudyDescription, ... */
const TAGS = {
  patientName: "00100010",
  patientId: "00100020",
  birthDate: "00100030",
  sex: "00100040",
  studyDescription: "00081030",
  studyUid: "0020000D",
  seriesUid: "0020000E",
  modality: "00080060",
  bodyPart: "00180015",
  sopInstanceUid: "00080018",
} as const;

/** The header of one instance as DICOM JSON. */
export function headerOf(file: Uint8Array): DicomJson {
  const p10 = parseP10(file);
  return toDicomJson(readDataset(p10.dataset, p10.meta.transferSyntax, "7FE00010"), {
    inlineLimit: 0,
  });
}

/** The SOP Instance UID of a header (for file names). */
export function sopInstanceUidOf(header: DicomJson): string | undefined {
  return jsonString(header, TAGS.sopInstanceUid);
}

function value(header: DicomJson, tag: string): string | null {
  const v = jsonString(header, tag);
  return v === undefined || v === "" ? null : v;
}

/** Metadata of the instances: patient of the first one, studies and series with counts. */
export function metadataOf(headers: DicomJson[]): JmixMetadata {
  if (headers.length === 0) throw new GatewayError(422, "invalid_dicom", "no DICOM instance");
  const first = headers[0];
  const studies = new Map<string, JmixStudy>();
  const series = new Map<string, JmixSeries>();
  for (const h of headers) {
    const studyUid = value(h, TAGS.studyUid);
    const seriesUid = value(h, TAGS.seriesUid);
    if (!studyUid || !seriesUid) {
      throw new GatewayError(
        422,
        "invalid_dicom",
        "an instance lacks StudyInstanceUID or SeriesInstanceUID",
      );
    }
    let study = studies.get(studyUid);
    if (!study) {
      study = {
        study_instance_uid: studyUid,
        description: value(h, TAGS.studyDescription),
        series: [],
      };
      studies.set(studyUid, study);
    }
    let s = series.get(seriesUid);
    if (!s) {
      s = {
        series_instance_uid: seriesUid,
        modality: value(h, TAGS.modality),
        body_part: value(h, TAGS.bodyPart),
        instance_count: 0,
      };
      series.set(seriesUid, s);
      study.series.push(s);
    }
    s.instance_count++;
  }
  return {
    patient: {
      name: value(first, TAGS.patientName),
      id: value(first, TAGS.patientId),
      birth_date: value(first, TAGS.birthDate),
      sex: value(first, TAGS.sex),
    },
    studies: [...studies.values()],
  };
}

/** DICOM files named `<SOPInstanceUID>.dcm` (else `instance-<n>.dcm`) and their metadata. */
export function dicomPayload(
  files: Uint8Array[],
): { metadata: JmixMetadata; dicom: Map<string, Uint8Array> } {
  const headers = files.map(headerOf);
  const dicom = new Map<string, Uint8Array>();
  files.forEach((f, i) => {
    const uid = sopInstanceUidOf(headers[i]);
    const name = uid && /^[0-9.]+$/.test(uid) ? `${uid}.dcm` : `instance-${i + 1}.dcm`;
    dicom.set(dicom.has(name) ? `instance-${i + 1}.dcm` : name, f);
  });
  return { metadata: metadataOf(headers), dicom };
}
