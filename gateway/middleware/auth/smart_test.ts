/** SMART scopes: v1 and v2 grants, decisions per interaction (the compartment: patient_rules_test). */
import { assertEquals } from "../../../tests/assert.ts";
import { fhirRequest } from "../request_kind.ts";
import { smartDecision, smartGrants } from "./smart.ts";

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
