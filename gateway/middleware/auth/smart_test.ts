/** SMART scopes: v1 and v2 grants, decisions per interaction, the patient compartment. */
import { assertEquals, assertThrows } from "../../../tests/assert.ts";
import { fhirRequest } from "../request_kind.ts";
import { inCompartment, patientConfined, smartDecision, smartGrants } from "./smart.ts";

const decide = (scopes: string, method: string, path: string) =>
  smartDecision(fhirRequest(method, path)!, smartGrants(scopes.split(" ")));

Deno.test("smart: v1 and v2 scopes grant interactions per type and context", () => {
  assertEquals(decide("patient/Observation.read", "GET", "/Observation/1"), {
    allowed: true,
    patientOnly: true,
  });
  assertEquals(decide("patient/Observation.read", "GET", "/Observation").allowed, true);
  assertEquals(decide("patient/Observation.read", "POST", "/Observation").allowed, false);
  assertEquals(decide("user/Observation.write", "POST", "/Observation").allowed, true);
  assertEquals(decide("patient/Observation.rs", "GET", "/Observation").allowed, true);
  assertEquals(decide("patient/Observation.r", "GET", "/Observation").allowed, false);
  assertEquals(decide("patient/Observation.cud", "DELETE", "/Observation/1").allowed, true);
  assertEquals(decide("system/*.read", "GET", "/Encounter/1"), {
    allowed: true,
    patientOnly: false,
  });
  assertEquals(decide("patient/*.rs user/Observation.rs", "GET", "/Observation").allowed, true);
  assertEquals(decide("patient/*.rs user/Observation.rs", "GET", "/Observation"), {
    allowed: true,
    patientOnly: false,
  });
  // A v2 scope with a query grants nothing here (its constraint is not enforced).
  assertEquals(
    decide("patient/Observation.rs?category=laboratory", "GET", "/Observation").allowed,
    false,
  );
  assertEquals(decide("openid launch", "GET", "/metadata").allowed, true);
  assertEquals(decide("user/*.read", "POST", "/").allowed, false);
  assertEquals(decide("system/*.cruds", "POST", "/").allowed, true);
});

Deno.test("smart: patient-context requests and answers stay in the patient's compartment", () => {
  const confined = (method: string, path: string, query = "") =>
    patientConfined(path, new URLSearchParams(query), fhirRequest(method, path)!, "123");
  assertEquals(confined("GET", "/Patient/123"), true);
  assertEquals(confined("GET", "/Patient/123/Observation"), true);
  assertThrows(() => confined("GET", "/Patient/999"), /not Patient\/999/);
  assertEquals(confined("GET", "/Observation", "patient=123"), true);
  assertEquals(confined("GET", "/Observation", "subject=Patient/123"), true);
  assertThrows(() => confined("GET", "/Observation", "code=1234-5"), /must name the patient/);
  assertThrows(() => confined("GET", "/Observation", "patient=999"), /must name the patient/);
  assertThrows(() => confined("GET", "/Patient", "name=smith"), /_id=123/);
  assertEquals(confined("GET", "/Observation/o1"), false); // the answer decides

  assertEquals(inCompartment({ resourceType: "Patient", id: "123" }, "123"), true);
  assertEquals(
    inCompartment({ resourceType: "Observation", subject: { reference: "Patient/123" } }, "123"),
    true,
  );
  assertEquals(
    inCompartment({ resourceType: "Observation", subject: { reference: "Patient/999" } }, "123"),
    false,
  );
  assertEquals(inCompartment(null, "123"), false);
});
