/**
 * SMART on FHIR scopes (SMART App Launch 1.0 and 2.x) enforced on FHIR requests: a scope grants
 * interactions on a resource type in a context. v1 `patient/Observation.read` (`read`: read,
 * vread, search, history; `write`: create, update, patch, delete; `*`: both), v2
 * `patient/Observation.rs` (c create, r read/vread/history, u update/patch, d delete, s search).
 * `patient/` scopes restrict access to the token's `patient` (its compartment: the rules are in
 * patient_rules.ts, the answer check in patient_answer.ts); `user/` and `system/` scopes do not.
 * Fails closed: a v2 scope with a query (`…rs?category=…`) grants nothing (its constraint is not
 * enforced here), and batches, transactions and `$operations` need a grant of every permission on
 * every type in the user or system context.
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
