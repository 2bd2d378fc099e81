/**
 * SMART on FHIR scopes (SMART App Launch 1.0 and 2.x) enforced on FHIR requests: a scope grants
 * interactions on a resource type in a context. v1 `patient/Observation.read` (`read`: read,
 * vread, search, history; `write`: create, update, patch, delete; `*`: both), v2
 * `patient/Observation.rs` (c create, r read/vread/history, u update/patch, d delete, s search).
 * `patient/` scopes restrict access to the token's `patient` (its compartment); `user/` and
 * `system/` scopes do not. Fails closed: a v2 scope with a query (`…rs?category=…`) grants nothing
 * (its constraint is not enforced here), batches, transactions and `$operations` need a grant of
 * every permission on every type in the user or system context, and a patient-context request
 * that cannot be tied to the patient is refused rather than answered.
 */
import type { FhirRequest } from "../request_kind.ts";

/** The contexts of a scope. */
type Context = "patient" | "user" | "system";

/** One permission a scope grants. */
interface Grant {
  context: Context;
  /** A resource type, or `*`. */
  type: string;
  /** Letters c, r, u, d, s. */
  permissions: Set<string>;
}

const V1: Record<string, string> = { read: "rs", write: "cud", "*": "cruds" };

/** The grants of a token's scopes (scopes that are not SMART resource scopes are skipped). */
export function smartGrants(scopes: readonly string[]): Grant[] {
  const grants: Grant[] = [];
  for (const scope of scopes) {
    const m = /^(patient|user|system)\/([A-Za-z]+|\*)\.([a-z*]+)$/.exec(scope);
    if (!m) continue; // openid, launch, a v2 scope with a query: grant nothing here
    const letters = V1[m[3]] ?? (/^c?r?u?d?s?$/.test(m[3]) ? m[3] : "");
    if (letters === "") continue;
    grants.push({ context: m[1] as Context, type: m[2], permissions: new Set(letters) });
  }
  return grants;
}

/** The permission letter an interaction needs. */
const NEEDS: Partial<Record<FhirRequest["interaction"], string>> = {
  read: "r",
  vread: "r",
  history: "r",
  search: "s",
  create: "c",
  update: "u",
  patch: "u",
  delete: "d",
};

/** What a request may do under the grants: refused (why), or allowed in these contexts. */
export type SmartDecision =
  | { allowed: false; why: string }
  | { allowed: true; patientOnly: boolean };

/**
 * Whether `grants` allow `request`. When only `patient/` grants allow it, `patientOnly` is true
 * and the caller must tie the request (or its answer) to the token's patient.
 */
export function smartDecision(request: FhirRequest, grants: readonly Grant[]): SmartDecision {
  if (request.interaction === "capabilities") return { allowed: true, patientOnly: false };
  const need = NEEDS[request.interaction];
  if (need === undefined) {
    const all = grants.some((g) =>
      g.context !== "patient" && g.type === "*" && g.permissions.size === 5
    );
    return all
      ? { allowed: true, patientOnly: false }
      : { allowed: false, why: `${request.interaction} needs user/*.* or system/*.*` };
  }
  const type = request.resourceType;
  const matching = grants.filter((g) =>
    g.permissions.has(need) && (g.type === "*" || (type !== undefined && g.type === type))
  );
  if (matching.length === 0) {
    return {
      allowed: false,
      why: `no scope grants ${request.interaction} on ${type ?? "the whole server"}`,
    };
  }
  return { allowed: true, patientOnly: matching.every((g) => g.context === "patient") };
}

/** `Patient/<id>` or `<id>` naming the patient (search parameter values). */
function namesPatient(value: string | null, patient: string): boolean {
  return value === patient || value === `Patient/${patient}`;
}

/**
 * For a patient-only request: true when the request itself is confined to `patient` (a Patient
 * read of that id, a search with `patient=`, `subject=` or `_id=` naming it, a compartment
 * search under it); false when only the answer can tell (a read by id of another type).
 * Throws a reason when the request is plainly about another patient or unconfined.
 */
export function patientConfined(
  path: string,
  query: URLSearchParams,
  request: FhirRequest,
  patient: string,
): boolean {
  const s = path.split("/").filter((p) => p !== "");
  if (s[0] === "Patient" && s.length >= 2) {
    if (s[1] !== patient) throw new Error(`the token's patient is not Patient/${s[1]}`);
    return true; // an instance of the patient, or a compartment search under it
  }
  if (request.interaction === "search" || request.interaction === "history") {
    const ok = request.resourceType === "Patient"
      ? namesPatient(query.get("_id"), patient)
      : namesPatient(query.get("patient"), patient) || namesPatient(query.get("subject"), patient);
    if (!ok) {
      throw new Error(
        `a patient-context search must name the patient (${
          request.resourceType === "Patient" ? "_id" : "patient or subject"
        }=${patient})`,
      );
    }
    return true;
  }
  if (
    request.interaction === "create" || request.interaction === "update" ||
    request.interaction === "patch" || request.interaction === "delete"
  ) {
    // Writes are tied to the patient by their body or the stored resource: not decided here.
    return false;
  }
  return false;
}

/** True when a FHIR resource (JSON) belongs to `patient`'s compartment by subject or patient. */
export function inCompartment(resource: unknown, patient: string): boolean {
  if (resource === null || typeof resource !== "object") return false;
  const r = resource as Record<string, unknown>;
  if (r.resourceType === "Patient") return r.id === patient;
  const ref = (v: unknown) => (v as { reference?: unknown } | undefined)?.reference;
  return [r.subject, r.patient, r.beneficiary].some((v) => ref(v) === `Patient/${patient}`);
}
