import assert from "node:assert/strict";
import { CloudClient, CloudHttpError, CloudUnreachableError } from "./client.ts";
import { fakeCloudFetch } from "../../tests/support/fake_cloud.ts";

Deno.test("CloudClient: bearer token, JSON body; errors carry the cloud's code, message and Retry-After", async () => {
  const seen: { auth: string | null; body: string }[] = [];
  const { fetch } = fakeCloudFetch({
    "POST /api/gateway/status": async (req) => {
      seen.push({ auth: req.headers.get("authorization"), body: await req.text() });
      return Response.json({ status: "online" });
    },
    "POST /api/gateway/token/renew": () =>
      Response.json({ error: { code: "rate_limited", message: "slow down" } }, {
        status: 429,
        headers: { "retry-after": "7" },
      }),
    "GET /api/gateway/self": () => new Response("oops", { status: 500 }),
  });
  const client = new CloudClient("https://cloud.example.com", fetch);
  await client.reportStatus("tok", {
    health: "healthy",
    software_version: "1",
    uptime_secs: 1,
    config_version: null,
    pipelines: [],
    error_counts: {},
    checks: [],
  });
  assert.equal(seen[0].auth, "Bearer tok");
  assert.equal(JSON.parse(seen[0].body).health, "healthy");
  const limited = await client.renew("tok").then(() => undefined, (e) => e);
  assert.ok(limited instanceof CloudHttpError);
  assert.deepEqual([limited.status, limited.code, limited.message, limited.retryAfterSecs], [
    429,
    "rate_limited",
    "slow down",
    7,
  ]);
  const broken = await client.self("tok").then(() => undefined, (e) => e);
  assert.deepEqual([broken.status, broken.code, broken.message], [
    500,
    "http_500",
    "HTTP 500: oops",
  ]);
});

Deno.test("CloudClient: a refused connection is CloudUnreachableError naming the service", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  const client = new CloudClient(`http://127.0.0.1:${port}`);
  const err = await client.jwks().then(() => undefined, (e) => e);
  assert.ok(err instanceof CloudUnreachableError);
  assert.match(
    err.message,
    new RegExp(`cloud service at http://127.0.0.1:${port} cannot be reached`),
  );
});

Deno.test("CloudClient: the config pull sends If-None-Match and the wait, and answers null for 304", async () => {
  const asked: string[] = [];
  const { fetch } = fakeCloudFetch({
    "GET /api/gateway/config": (req) => {
      asked.push(`${new URL(req.url).search} ${req.headers.get("if-none-match")}`);
      return req.headers.get("if-none-match")
        ? new Response(null, { status: 304 })
        : Response.json({ version: 1, etag: '"a"', toml: "", transforms: [] });
    },
  });
  const client = new CloudClient("https://cloud.example.com", fetch);
  assert.equal((await client.pullConfig("t", null, 60))?.version, 1);
  assert.equal(await client.pullConfig("t", '"a"', 60), null);
  assert.deepEqual(asked, ["?wait=0 null", '?wait=60 "a"']);
});

Deno.test("CloudClient: credentials inside URLs in a JSON body are redacted and the keys reported", async () => {
  const bodies: string[] = [];
  const { fetch } = fakeCloudFetch({
    "POST /api/gateway/config/apply": async (req) => {
      bodies.push(await req.text());
      return Response.json({ status: "online" });
    },
  });
  const told: [string, string[]][] = [];
  const client = new CloudClient(
    "https://cloud.example.com",
    fetch,
    (call, keys) => told.push([call, keys]),
  );
  await client.reportApply("tok", {
    version: 2,
    status: "failed",
    errors: [
      { path: "backends.a.options.base_url", message: "https://u:pw@h/?access_token=abc fails" },
      { message: "plain, https://h/fhir stays" },
    ],
  });
  assert.ok(!bodies[0].includes("pw@") && !bodies[0].includes("abc"), bodies[0]);
  assert.deepEqual(JSON.parse(bodies[0]).errors, [
    {
      path: "backends.a.options.base_url",
      message: "https://<redacted>:<redacted>@h/?access_token=<redacted> fails",
    },
    { message: "plain, https://h/fhir stays" },
  ]);
  assert.deepEqual(told, [["POST /api/gateway/config/apply", ["errors[0].message"]]]);
});
