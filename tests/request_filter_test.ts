/**
 * `request_filter` end to end with curl: on a FHIR endpoint, only reads and searches of Patient
 * and Observation pass (OperationOutcome otherwise); methods, paths, required headers and body size
 * on an http endpoint.
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
    } finally {
      await gw.stop();
    }
  },
});
