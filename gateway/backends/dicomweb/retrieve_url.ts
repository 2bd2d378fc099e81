/**
 * Retrieve URLs (0008,1190) in the DICOM JSON a DICOMweb origin answers (STOW-RS responses, QIDO-RS
 * results) name the origin's own address, such as `http://127.0.0.1:8042/dicom-web/studies/…`,
 * which a client of the gateway cannot (and should not) reach. They are rewritten to the gateway
 * URL the client used: the request's scheme, host and endpoint prefix.
 */
import type { DicomJson } from "../../dicom/mod.ts";
import type { RequestEnvelope, ResponseEnvelope } from "../../envelope.ts";

const RETRIEVE_URL = "00081190";
/** Sequences whose items carry a Retrieve URL (STOW-RS: referenced, failed, other failures). */
const SEQUENCES = ["00081199", "00081198", "0008119A"];

/** True when the answer to `req` may carry retrieve URLs worth rewriting (STOW or QIDO). */
export function mayCarryRetrieveUrls(req: RequestEnvelope, res: ResponseEnvelope): boolean {
  if (res.status >= 300 || res.body.isEmpty) return false;
  const type = (res.headers.get("content-type") ?? "").split(";")[0].trim().toLowerCase();
  if (type !== "application/dicom+json" && type !== "application/json") return false;
  if (req.method === "POST") return true;
  return req.method === "GET" && /\/(studies|series|instances)$/.test(req.path);
}

/** The gateway's own URL for the endpoint `req` arrived on (no trailing slash). */
export function gatewayBase(req: RequestEnvelope): string {
  const prefix = req.originalPath.slice(0, req.originalPath.length - req.path.length);
  return `${req.scheme}://${req.host}${prefix.replace(/\/+$/, "")}`;
}

/**
 * Rewrites, in place, every Retrieve URL that starts with one of `origins` (the backend's base and
 * target URLs, without trailing slash) so that it starts with `base` instead. Returns the number
 * rewritten. Looks at the top level (an object or a QIDO array) and the STOW-RS sequences only.
 */
export function rewriteRetrieveUrls(data: unknown, origins: string[], base: string): number {
  let count = 0;
  const fix = (item: unknown) => {
    if (typeof item !== "object" || item === null || Array.isArray(item)) return;
    const element = (item as DicomJson)[RETRIEVE_URL];
    const values = element?.Value;
    if (!Array.isArray(values)) return;
    for (let i = 0; i < values.length; i++) {
      const url = values[i];
      if (typeof url !== "string") continue;
      const origin = origins.find((o) => url === o || url.startsWith(o + "/"));
      if (origin === undefined) continue;
      values[i] = base + url.slice(origin.length);
      count++;
    }
  };
  const visit = (item: unknown) => {
    fix(item);
    if (typeof item !== "object" || item === null) return;
    for (const tag of SEQUENCES) {
      const seq = (item as DicomJson)[tag]?.Value;
      if (Array.isArray(seq)) seq.forEach(fix);
    }
  };
  if (Array.isArray(data)) data.forEach(visit);
  else visit(data);
  return count;
}
