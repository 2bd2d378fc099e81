/**
 * The request path as the info log writes it. Paths carry identifiers (a FHIR resource id is
 * often an MRN, a DICOM study UID identifies a patient's study), and an access log is read by
 * more people and kept longer than patient data should be. So, unless `[logging]
 * log_identifiers = true`, the log keeps the route and the shape of the path and replaces what
 * identifies someone: FHIR resource types and `$operation`/`_history` stay, ids become `{id}`;
 * DICOMweb keywords stay, UIDs become `{uid}`; below any other endpoint's prefix each segment is
 * `{…}`.
 *
 * @example
 * ```ts
 * import { loggedPath } from "./logged_path.ts";
 * loggedPath("/fhir/Patient/MRN-123/_history/2", "/fhir", "fhir"); // "/fhir/Patient/{id}/_history/{id}"
 * ```
 */

/** How an endpoint's path below its prefix is shaped. */
export type PathShape = "fhir" | "dicomweb" | "opaque";

const FHIR_TYPE = /^[A-Z][A-Za-z]{1,63}$/;
const DICOMWEB_WORDS = new Set([
  "studies",
  "series",
  "instances",
  "frames",
  "metadata",
  "rendered",
  "thumbnail",
  "bulkdata",
  "pixeldata",
  "workitems",
]);

function keep(shape: PathShape, segment: string): boolean {
  if (shape === "fhir") {
    return FHIR_TYPE.test(segment) || /^[$_][A-Za-z-]{1,63}$/.test(segment) ||
      segment === "metadata";
  }
  if (shape === "dicomweb") return DICOMWEB_WORDS.has(segment);
  return false;
}

/** `pathname` with the identifying segments below `prefix` replaced (see the module doc). */
export function loggedPath(pathname: string, prefix: string, shape: PathShape): string {
  const base = prefix === "/" ? "" : prefix.replace(/\/+$/, "");
  if (!pathname.startsWith(base)) return `${base}/{…}`;
  const rest = pathname.slice(base.length).split("/").filter((s) => s !== "");
  const placeholder = shape === "fhir" ? "{id}" : shape === "dicomweb" ? "{uid}" : "{…}";
  const shown = rest.map((s) => keep(shape, s) ? s : placeholder);
  return `${base}/${shown.join("/")}`;
}
