/**
 * The answer to a SMART patient-context request, checked before it leaves: a resource, or every
 * entry of a Bundle (search matches, `_include`d and `_revinclude`d entries, history versions),
 * must be inside the token's patient compartment or of a type listed in `smart_shared_types`.
 * One resource outside fails the whole answer. An OperationOutcome carries no patient data and
 * passes; a history entry of a deleted version (no resource) passes.
 */
import type { PatientCompartment } from "./patient_compartment.ts";

/** Why `answer` (parsed JSON, null for an empty body) may not reach the client, or null. */
export function answerProblem(
  answer: unknown,
  patient: string,
  compartment: PatientCompartment,
  sharedTypes: ReadonlySet<string>,
): string | null {
  if (answer === null) return null;
  const check = (resource: unknown): string | null => {
    const type = (resource as { resourceType?: unknown } | null)?.resourceType;
    if (type === "OperationOutcome") return null;
    if (typeof type === "string" && sharedTypes.has(type)) return null;
    return compartment.outside(resource, patient);
  };
  if ((answer as { resourceType?: unknown })?.resourceType !== "Bundle") return check(answer);
  const entries = (answer as { entry?: unknown }).entry;
  if (entries === undefined) return null;
  if (!Array.isArray(entries)) return "a Bundle whose entry is not a list";
  for (const entry of entries) {
    if (entry === null || typeof entry !== "object") return "a Bundle entry that is not an object";
    const e = entry as { resource?: unknown; response?: { outcome?: unknown } };
    if (e.resource !== undefined) {
      const problem = check(e.resource);
      if (problem) return problem;
    }
    if (e.response?.outcome !== undefined) {
      const problem = check(e.response.outcome);
      if (problem) return problem;
    }
  }
  return null;
}
