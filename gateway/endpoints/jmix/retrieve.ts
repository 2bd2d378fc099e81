/** Build a package for a study retrieved by C-GET (or C-MOVE) through a `dicom_scu` backend. */
import { buildPackage, type BuiltPackage } from "../../../shared/jmix/mod.ts";
import { boundaryOf, decodeMultipart } from "../../dicom/mod.ts";
import { RequestEnvelope } from "../../envelope.ts";
import { GatewayError } from "../../errors.ts";
import type { Backend, BackendCall } from "../../pipeline/mod.ts";
import { dicomPayload } from "./dicom_metadata.ts";
import type { JmixKeys } from "./settings.ts";

/** The Part 10 files of a study, retrieved through the backend (empty when the PACS has none). */
export async function retrieveStudy(
  scu: Backend,
  studyUid: string,
  endpoint: string,
  requestId: string,
  call: BackendCall,
): Promise<Uint8Array[]> {
  const path = `/studies/${studyUid}`;
  const env = new RequestEnvelope({
    id: requestId,
    protocol: "http",
    method: "GET",
    path,
    originalPath: path,
    metadata: { endpoint, service: "jmix", method: "GET", path },
    endpoint,
  });
  const res = await scu.invoke(env, call);
  const bytes = await res.body.bytes();
  if (res.status !== 200) {
    throw new GatewayError(502, "dicom_retrieve_failed", `retrieve answered ${res.status}`);
  }
  const boundary = boundaryOf(res.body.contentType);
  if (!boundary) return [];
  return decodeMultipart(bytes, boundary).map((p) => p.body);
}

/** A package of the retrieved study, signed and encrypted as configured. */
export async function packageOfStudy(
  files: Uint8Array[],
  sender: string,
  keys: JmixKeys,
  studyUid: string,
): Promise<BuiltPackage> {
  const { metadata, dicom } = dicomPayload(files);
  return await buildPackage({
    metadata,
    dicom,
    sender: { name: sender },
    signing: keys.signing,
    encryptFor: keys.encryptFor,
    audit: [{
      event: "retrieved",
      by: sender,
      timestamp: new Date().toISOString(),
      details: { study_instance_uid: studyUid, instances: files.length, method: "dimse" },
    }],
  });
}
