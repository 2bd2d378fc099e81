import { equal } from "node:assert/strict";
import { loggedPath } from "./logged_path.ts";

Deno.test("loggedPath: FHIR keeps resource types and operations, replaces ids", () => {
  equal(loggedPath("/fhir/Patient/MRN-000123", "/fhir", "fhir"), "/fhir/Patient/{id}");
  equal(
    loggedPath("/fhir/Patient/123/_history/4", "/fhir", "fhir"),
    "/fhir/Patient/{id}/_history/{id}",
  );
  equal(
    loggedPath("/fhir/Patient/123/$everything", "/fhir", "fhir"),
    "/fhir/Patient/{id}/$everything",
  );
  equal(loggedPath("/fhir/Observation", "/fhir", "fhir"), "/fhir/Observation");
  equal(loggedPath("/fhir/metadata", "/fhir", "fhir"), "/fhir/metadata");
  // A lower-case id is an id; so is one that only looks like a word with digits.
  equal(loggedPath("/fhir/Patient/smith", "/fhir", "fhir"), "/fhir/Patient/{id}");
});

Deno.test("loggedPath: DICOMweb keeps its keywords, replaces UIDs; other endpoints show only the prefix", () => {
  equal(
    loggedPath("/dicomweb/studies/1.2.840.1/series/1.2.840.2/metadata", "/dicomweb", "dicomweb"),
    "/dicomweb/studies/{uid}/series/{uid}/metadata",
  );
  equal(loggedPath("/api/patients/12345", "/api", "opaque"), "/api/{…}/{…}");
  equal(loggedPath("/api", "/api", "opaque"), "/api/");
  equal(loggedPath("/x/y", "/", "opaque"), "/{…}/{…}");
});
