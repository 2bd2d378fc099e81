/**
 * `rate_limit` end to end with curl: a burst passes, the next request gets 429 with Retry-After
 * and never reaches the backend, another key has its own bucket, and /metrics counts the refusals.
 */
import { assert, assertEquals } from "./assert.ts";
import { startTestGateway } from "./harness.ts";
import { curl, requirePeer } from "./support/mod.ts";

Deno.test({
  name: "rate_limit: curl bursts per tenant header, 429 with Retry-After, counted in /metrics",
  ignore: !requirePeer("curl", "curl", "curl"),
  fn: async () => {
    const gw = await startTestGateway(`
[endpoints.api]
service = "http"
[endpoints.api.options]
path_prefix = "/api"

[middleware.limit]
type = "rate_limit"
[middleware.limit.options]
requests_per_second = 0.5
burst = 3
key = "header:x-tenant"

[backends.echo]
service = "echo"

[pipelines.api]
endpoints = ["api"]
middleware = ["limit"]
backends = ["echo"]
`);
    try {
      const statuses = async (tenant: string, n: number) => {
        // One curl, one connection, `--next` between requests (each with its own options).
        const one = [
          "-s",
          "-o",
          "/dev/null",
          "-w",
          "%{http_code} %header{retry-after}\\n",
          "-H",
          `X-Tenant: ${tenant}`,
          `${gw.url}/api/x`,
        ];
        const r = await curl(
          Array.from({ length: n }, (_, k) => k ? ["--next", ...one] : one).flat(),
        );
        assertEquals(r.code, 0, r.stderr);
        return r.stdout.trim().split("\n").map((line) => line.trim());
      };
      assertEquals(await statuses("radiology", 5), ["200", "200", "200", "429 2", "429 2"]);
      assertEquals(await statuses("lab", 2), ["200", "200"]);
      const metrics = await (await gw.mgmtFetch("/metrics")).text();
      assert(/gateway_errors_total\{code="rate_limited"\} 2/.test(metrics), metrics);
    } finally {
      await gw.stop();
    }
  },
});
