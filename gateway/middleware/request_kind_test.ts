/** FHIR interactions and DICOMweb services as request_kind.ts reads them from method and path. */
import { assertEquals } from "../../tests/assert.ts";
import { validateConfigText } from "../../shared/gateway_config/mod.ts";
import { dicomwebService, fhirRequest } from "./request_kind.ts";

Deno.test("fhirRequest: the RESTful API's interactions and resource types", () => {
  const cases: [string, string, string | null, string | undefined][] = [
    ["GET", "/Patient/123", "read", "Patient"],
    ["HEAD", "/Patient/123", "read", "Patient"],
    ["GET", "/Patient/123/_history/2", "vread", "Patient"],
    ["GET", "/Patient/123/_history", "history", "Patient"],
    ["GET", "/Patient/_history", "history", "Patient"],
    ["GET", "/_history", "history", undefined],
    ["GET", "/Patient", "search", "Patient"],
    ["POST", "/Patient/_search", "search", "Patient"],
    ["POST", "/_search", "search", undefined],
    ["GET", "/Patient/123/Observation", "search", "Observation"],
    ["POST", "/Patient", "create", "Patient"],
    ["PUT", "/Patient/123", "update", "Patient"],
    ["PUT", "/Patient", "update", "Patient"],
    ["PATCH", "/Patient/123", "patch", "Patient"],
    ["DELETE", "/Patient/123", "delete", "Patient"],
    ["GET", "/metadata", "capabilities", undefined],
    ["POST", "/", "batch", undefined],
    ["GET", "/", "search", undefined],
    ["POST", "/Patient/123/$everything", "operation", "Patient"],
    ["GET", "/$export", "operation", undefined],
    // Decoded as the server decodes them.
    ["GET", "/Observation/%24everything", "operation", "Observation"],
    ["GET", "/%50atient/123", "read", "Patient"],
    ["GET", "/Observation/1%2F..%2F..%2FPatient%2F1", null, undefined],
    ["GET", "/Patient//123", null, undefined],
    ["GET", "/patient/123", null, undefined],
    ["POST", "/Patient/123", null, undefined],
    ["DELETE", "/metadata", null, undefined],
  ];
  for (const [method, path, interaction, type] of cases) {
    const r = fhirRequest(method, path);
    assertEquals(r?.interaction ?? null, interaction, `${method} ${path}`);
    assertEquals(r?.resourceType, r ? type : undefined, `${method} ${path}`);
  }
});

Deno.test("dicomwebService: QIDO, WADO and STOW by method and path", () => {
  const cases: [string, string, string | null][] = [
    ["GET", "/studies", "qido"],
    ["GET", "/studies/1.2/series", "qido"],
    ["GET", "/studies/1.2/series/3.4/instances", "qido"],
    ["GET", "/instances", "qido"],
    ["GET", "/series", "qido"],
    ["HEAD", "/studies/1.2/instances", "qido"],
    ["GET", "/bulkdata/1.2/3.4/5.6/7FE00010", "wado"],
    ["POST", "/bulkdata/1.2/3.4/5.6/7FE00010", null],
    ["GET", "/studies/1.2", "wado"],
    ["GET", "/studies/1.2/metadata", "wado"],
    ["GET", "/studies/1.2/series/3.4/instances/5.6/frames/1", "wado"],
    ["GET", "/studies/1.2/rendered", "wado"],
    ["POST", "/studies", "stow"],
    ["POST", "/studies/1.2", "stow"],
    ["POST", "/studies/1.2/series", null],
    ["DELETE", "/studies/1.2", null],
    ["GET", "/other", null],
  ];
  for (const [method, path, service] of cases) {
    assertEquals(dicomwebService(method, path), service, `${method} ${path}`);
  }
});

Deno.test("request_filter paths: regexp groups are refused, so matching stays linear", () => {
  const problems = (paths: string[]) =>
    validateConfigText(
      `[middleware.f]\ntype = "request_filter"\n[middleware.f.options]\npaths = ${
        JSON.stringify(paths)
      }`,
      "gateway.toml",
    ).problems.map((p) => p.message);
  assertEquals(problems(["/Patient/:id", "/studies/*", "/Observation{/*}?"]), []);
  assertEquals(problems(["/:id((a+)+$)"]).some((m) => m.includes("no `(` regexp groups")), true);
  assertEquals(problems(["no-slash"]).length, 1);
});
