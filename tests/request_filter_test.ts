/**
 * `request_filter` end to end with curl: on a FHIR endpoint, only reads and searches of Patient
 * and Observation pass (OperationOutcome otherwise); methods, paths, required headers and body size
 * on an http endpoint; percent-encoded paths decided as the server reads them, ambiguous paths and
 * method overrides refused.
 */
import { assertEquals } from "./assert.ts";
import { startTestGateway } from "./harness.ts";
import { curl, requirePeer } from "./support/mod.ts";

Deno.test({
  name: "request_filter: FHIR interactions and types, methods, paths, headers and sizes, with curl",
  ignore: !requirePeer("curl", "curl", "curl"),
  fn: async () => {
    const gw = await startTestGateway(`
[endpoints.fhir]
service = "fhir"
[endpoints.fhir.options]
path_prefix = "/fhir"

[endpoints.api]
service = "http"
[endpoints.api.options]
path_prefix = "/api"

[middleware.fhir_reads]
type = "request_filter"
[middleware.fhir_reads.options]
fhir_resource_types = ["Patient", "Observation"]
fhir_interactions = ["read", "search"]

[middleware.api_rules]
type = "request_filter"
[middleware.api_rules.options]
methods = ["GET", "POST"]
paths = ["/orders/:id", "/orders"]
required_headers = ["x-tenant"]
max_body_bytes = 16

[backends.echo]
service = "echo"

[pipelines.fhir]
endpoints = ["fhir"]
middleware = ["fhir_reads"]
backends = ["echo"]

[pipelines.api]
endpoints = ["api"]
middleware = ["api_rules"]
backends = ["echo"]
`);
    const call = async (args: string[]) => {
      const r = await curl(["-s", "-w", "\n%{http_code}", ...args]);
      const cut = r.stdout.lastIndexOf("\n");
      return { status: Number(r.stdout.slice(cut + 1)), body: JSON.parse(r.stdout.slice(0, cut)) };
    };
    try {
      const fhir = `${gw.url}/fhir`;
      assertEquals((await call([`${fhir}/Patient/123`])).status, 200);
      assertEquals((await call([`${fhir}/Observation?subject=Patient/123`])).status, 200);
      for (
        const [args, why] of [
          [[`${fhir}/Encounter/9`], "FHIR resource type Encounter is not allowed here"],
          [
            ["-X", "DELETE", `${fhir}/Patient/123`],
            "the FHIR delete interaction is not allowed here",
          ],
          [[`${fhir}/metadata`], "the FHIR capabilities interaction is not allowed here"],
        ] as [string[], string][]
      ) {
        const r = await call(args);
        assertEquals(r.status, 403, args.join(" "));
        assertEquals(r.body.resourceType, "OperationOutcome");
        assertEquals(r.body.issue[0].diagnostics.includes(why), true, JSON.stringify(r.body));
      }

      const api = `${gw.url}/api`;
      const tenant = ["-H", "X-Tenant: t1"];
      assertEquals((await call([...tenant, `${api}/orders/7`])).status, 200);
      const put = await call([...tenant, "-X", "PUT", `${api}/orders/7`]);
      assertEquals([put.status, put.body.error.code], [405, "method_not_allowed"]);
      const other = await call([...tenant, `${api}/admin`]);
      assertEquals([other.status, other.body.error.message], [
        403,
        "path /admin is not allowed here",
      ]);
      const noTenant = await call([`${api}/orders`]);
      assertEquals(noTenant.body.error.message, "the x-tenant header is required");
      const big = await call([...tenant, "-d", "x".repeat(100), `${api}/orders`]);
      assertEquals([big.status, big.body.error.code], [413, "payload_too_large"]);

      // Decided as the server will read it: decoded segments, the real method.
      const op = await call([`${fhir}/Observation/%24everything`]);
      assertEquals(op.status, 403, "an encoded $ is still an operation");
      assertEquals(op.body.issue[0].diagnostics.includes("operation interaction"), true);
      for (
        const path of [
          "/Observation/1%2F..%2F..%2FPatient%2F1",
          "/Observation/1%5C..%5CPatient",
          "/Patient;x=1/123",
          "/Patient//123",
        ]
      ) {
        const r = await call(["--path-as-is", `${fhir}${path}`]);
        assertEquals([r.status, r.body.issue[0].details.text], [400, "ambiguous_path"], path);
      }
      // Encoded letters are still the same path (`%50atient` is `Patient`).
      assertEquals((await call([`${fhir}/%50atient/123`])).status, 200);
      const encodedPath = await call([...tenant, `${api}/%61dmin`]);
      assertEquals(encodedPath.body.error.message, "path /admin is not allowed here");
      for (
        const args of [
          ["-H", "X-HTTP-Method-Override: DELETE", `${fhir}/Patient/123`],
          ["-H", "X-Method-Override: PUT", ...tenant, `${api}/orders/7`],
          ["-H", "X-HTTP-Method: DELETE", ...tenant, `${api}/orders/7`],
          [...tenant, `${api}/orders/7?%5Fmethod=DELETE`],
        ]
      ) {
        const r = await call(args);
        const code = r.body.error?.code ?? r.body.issue[0].details.text;
        assertEquals([r.status, code], [400, "method_override_refused"], args.join(" "));
      }
      // An override naming the method itself is no override.
      const same = await call(["-H", "X-HTTP-Method-Override: GET", `${fhir}/Patient/123`]);
      assertEquals(same.status, 200);
    } finally {
      await gw.stop();
    }
  },
});
