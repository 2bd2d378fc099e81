/**
 * What a request made under SMART `patient/` scopes alone may do: it is forwarded only when the
 * gateway can prove that it stays inside the token's patient compartment (patient_compartment.ts),
 * and every answer is then checked entry by entry (patient_answer.ts). Fail closed: whatever
 * cannot be proven is refused, with the reason.
 *
 * - read and vread by id, and the history of one instance: forwarded, the answer decides;
 *   a Patient by id only when it is the token's patient.
 * - search of a compartment type: only with a parameter that confines it to the patient
 *   (`patient=P`, `subject=Patient/P`, … as the CompartmentDefinition and the R4 search
 *   parameters name them), every occurrence naming P; a compartment search under `Patient/P`.
 *   `_filter`, `_query`, `_has`, chained parameters and `_contained` are refused (the gateway
 *   cannot prove what they select); `_include` and `_revinclude` pass, their entries checked.
 * - search or history of a whole type or the whole server: refused (a history takes no
 *   `patient` parameter), except a paging request (`_getpages`), whose answer decides.
 * - create: the body must be a resource of the path's type inside the compartment; an
 *   `If-None-Exist` condition must itself be a confined search.
 * - update and delete by id: the target is read first and must be inside (the update then
 *   carries `If-Match` with the version read, so the resource checked is the one replaced); the
 *   new body must be inside too. Conditional updates and deletes, and PATCH, are refused.
 * - types outside any compartment (Medication, Practitioner, …) only when the configuration
 *   lists them in `smart_shared_types`, and only read and searched.
 */
import type { FhirRequest } from "../request_kind.ts";
import type { PatientCompartment } from "./patient_compartment.ts";

/** What to do with a patient-context request. */
export type PatientPlan =
  | { refused: string }
  | {
    refused?: undefined;
    /** The body must be a resource of this type inside the compartment. */
    body?: { type: string; id?: string };
    /** Read this path (`/Type/id`) first: the target must be inside (or not exist). */
    preRead?: string;
    /** Carry `If-Match` with the version read first (updates). */
    ifMatch?: boolean;
  };

/** The request, as the rules read it. */
export interface PatientRequest {
  method: string;
  /** Decoded path segments below the endpoint prefix. */
  segments: readonly string[];
  kind: FhirRequest;
  /** Search parameters: the query, plus a POSTed `_search` form. */
  params: URLSearchParams;
  /** The `If-None-Exist` header, if any. */
  ifNoneExist: string | null;
}

/** Parameters whose selection the gateway cannot prove is confined (prefix `_has` too). */
const UNPROVABLE = new Set(["_filter", "_query", "_contained", "_containedType"]);

/** Values of `_format` whose answer is JSON (the answer must be checked as JSON). */
const JSON_FORMATS = new Set(["json", "application/json", "application/fhir+json"]);

/** The plan for a patient-context `request` with the token's `patient`. */
export function patientPlan(
  request: PatientRequest,
  patient: string,
  compartment: PatientCompartment,
  sharedTypes: ReadonlySet<string>,
): PatientPlan {
  const { kind, segments } = request;
  const type = kind.resourceType;
  const paramProblem = unprovableParam(request.params);
  if (paramProblem) return { refused: paramProblem };
  const reachable = (t: string | undefined): string | null =>
    t === undefined
      ? "a system-level request is not confined to the patient"
      : compartment.has(t) || sharedTypes.has(t)
      ? null
      : `${t} is outside the patient compartment (list it in smart_shared_types to allow reads)`;
  const patientId = (t: string | undefined, id: string | undefined): string | null =>
    t === "Patient" && id !== patient ? `the token's patient is not Patient/${id}` : null;

  switch (kind.interaction) {
    case "read":
    case "vread":
      if (request.method === "HEAD") {
        return { refused: "HEAD answers cannot be checked against the compartment; use GET" };
      }
      return refusedOr(reachable(type) ?? patientId(type, segments[1]), {});
    case "history":
      if (segments.length !== 3) {
        return {
          refused: "a history of a whole type or server is not confined to the patient " +
            "(read the history of one resource instead)",
        };
      }
      return refusedOr(reachable(type) ?? patientId(type, segments[1]), {});
    case "search": {
      if (segments.length === 0 || (segments.length === 1 && segments[0] === "_search")) {
        return request.params.has("_getpages")
          ? {}
          : { refused: "a system-level search is not confined to the patient" };
      }
      if (segments[0] === "Patient" && segments.length === 3) {
        // A compartment search: GET /Patient/P/Observation.
        if (segments[1] !== patient) {
          return { refused: `the token's patient is not Patient/${segments[1]}` };
        }
        return refusedOr(compartment.has(segments[2]) ? null : reachable(segments[2]), {});
      }
      const problem = reachable(type);
      if (problem) return { refused: problem };
      if (sharedTypes.has(type!)) return {};
      return refusedOr(confinedSearch(type!, request.params, patient, compartment), {});
    }
    case "create": {
      if (!type || !compartment.has(type)) {
        return { refused: `${type ?? "a system-level create"} is not created in patient context` };
      }
      if (request.ifNoneExist !== null) {
        const condition = new URLSearchParams(request.ifNoneExist);
        const problem = unprovableParam(condition) ??
          confinedSearch(type, condition, patient, compartment);
        if (problem) return { refused: `If-None-Exist: ${problem}` };
      }
      return { body: { type } };
    }
    case "update":
    case "delete": {
      if (segments.length !== 2) {
        return {
          refused: `a conditional ${kind.interaction} is not confined to the patient ` +
            `(${kind.interaction} the resource by id)`,
        };
      }
      if (!type || !compartment.has(type)) {
        return { refused: `${type} is not written in patient context` };
      }
      const idProblem = patientId(type, segments[1]);
      if (idProblem) return { refused: idProblem };
      const target = `/${type}/${segments[1]}`;
      return kind.interaction === "update"
        ? { preRead: target, ifMatch: true, body: { type, id: segments[1] } }
        : { preRead: target };
    }
    case "patch":
      return {
        refused: "a PATCH cannot be checked against the compartment before it is applied " +
          "(send the whole resource with PUT)",
      };
    default:
      return { refused: `a patient-context ${kind.interaction} cannot be checked` };
  }
}

function refusedOr(problem: string | null, plan: PatientPlan): PatientPlan {
  return problem ? { refused: problem } : plan;
}

/** A parameter whose selection cannot be proven confined, or a non-JSON `_format`; or null. */
function unprovableParam(params: URLSearchParams): string | null {
  for (const [name, value] of params) {
    const base = name.split(":", 1)[0];
    if (UNPROVABLE.has(base) || base === "_has") {
      return `the ${base} parameter selects what the gateway cannot check`;
    }
    if (name.includes(".")) {
      return `the chained parameter ${name} selects what the gateway cannot check`;
    }
    if (base === "_format" && !JSON_FORMATS.has(value.toLowerCase())) {
      return "answers are checked as JSON: _format must be json";
    }
  }
  return null;
}

/** Why a search of `type` is not confined to `patient` by its parameters, or null. */
function confinedSearch(
  type: string,
  params: URLSearchParams,
  patient: string,
  compartment: PatientCompartment,
): string | null {
  const names = compartment.patientParams(type);
  const byId = type === "Patient";
  let confined = false;
  for (const [name, value] of params) {
    const [base, modifier] = name.split(":", 2);
    const isId = byId && base === "_id";
    if (!isId && !names.has(base)) continue;
    if (modifier !== undefined && !(modifier === "Patient" && !isId)) {
      return `the ${name} modifier cannot be checked (name the patient as ${base}=${patient})`;
    }
    const named = isId ? value === patient : value === patient || value === `Patient/${patient}`;
    if (!named) return `${base}=${value} is not the token's patient`;
    confined = true;
  }
  if (confined) return null;
  const options = [...(byId ? ["_id"] : []), ...names].map((n) => `${n}=${patient}`);
  return `a patient-context search of ${type} must name the patient (${options.join(" or ")})`;
}
