/**
 * Credentials inside URLs never land in the cloud: the REST API and the MCP tools refuse records
 * whose URLs carry userinfo or a secret-looking query parameter (422 naming the field, the value
 * not echoed), `${VAR}` references are stored; a gateway's uploaded configuration is stored with
 * them redacted and each one named among the problems.
 */
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { call, makeUser, type TestCloud, withCloud } from "./cloud_harness.ts";
import { connectMcp, errorText } from "./mcp_harness.ts";

const LEAKS = ["access_token=abc", "u:pw@", "k:s3cret@", "key=k3y"];

function assertNoLeak(text: string, what: string): void {
  for (const leak of LEAKS) assert(!text.includes(leak), `${what} holds ${leak}: ${text}`);
}

async function service(cloud: TestCloud, token: string) {
  return (await call(cloud, "POST", "/api/services", {
    token,
    body: { name: "ehr", endpoint_types: ["http"], backend_types: ["fhir", "storage"] },
  })).json;
}

const fields = (res: { json: unknown }) =>
  (res.json as { error: { fields: { field: string }[] } }).error.fields.map((f) => f.field);

Deno.test("resources: URLs with userinfo or a secret query parameter are refused, references stored", async () => {
  await withCloud(async (cloud) => {
    const { apiToken: token } = await makeUser(cloud, "ada@example.com");
    const svc = await service(cloud, token);
    const post = (kind: string, body: unknown) =>
      call(cloud, "POST", `/api/${kind}`, { token, body });

    const fhir = await post("backends", {
      name: "ehr",
      service_id: svc.id,
      type: "fhir",
      options: { base_url: "https://h/fhir?_count=5&access_token=abc" },
    });
    assertEquals(fhir.status, 422, fhir.text);
    assertEquals(fields(fhir), ["options.base_url"]);
    assertMatch(fhir.json.error.fields[0].message, /query parameter `access_token`/);
    assertMatch(fhir.json.error.fields[0].message, /\$\{FHIR_TOKEN\}/);

    const targets = await post("backends", {
      name: "ehr",
      service_id: svc.id,
      type: "fhir",
      targets: [{ name: "a", url: "https://h/" }, { name: "b", url: "https://u:pw@h/" }],
    });
    assertEquals(targets.status, 422, targets.text);
    assertEquals(fields(targets), ["targets.1.url"]);
    assertMatch(targets.json.error.fields[0].message, /user or password/);

    const s3 = await post("backends", {
      name: "archive",
      service_id: svc.id,
      type: "storage",
      options: {
        root: "s3://archive/in",
        region: "eu-central-1",
        read_pattern: "{path}",
        endpoint: "https://k:s3cret@s3.local",
      },
    });
    assertEquals(s3.status, 422, s3.text);
    assertEquals(fields(s3), ["options.endpoint"]);

    const jwt = await post("middleware", {
      name: "auth",
      type: "jwt_auth",
      options: {
        jwks_url: "https://login.example.org/jwks?key=k3y",
        issuer: "https://login.example.org",
        audience: ["fhir"],
      },
    });
    assertEquals(jwt.status, 422, jwt.text);
    assertEquals(fields(jwt), ["options.jwks_url"]);

    for (const res of [fhir, targets, s3, jwt]) assertNoLeak(res.text, "the refusal");

    // References are the way: stored as written.
    const stored = await post("backends", {
      name: "ehr",
      service_id: svc.id,
      type: "fhir",
      options: { base_url: "https://${FHIR_USER}:${FHIR_PW}@h/fhir?access_token=${FHIR_TOKEN}" },
    });
    assertEquals(stored.status, 201, stored.text);
    assertEquals(
      stored.json.options.base_url,
      "https://${FHIR_USER}:${FHIR_PW}@h/fhir?access_token=${FHIR_TOKEN}",
    );
    // An update cannot bring a credential in either.
    const patched = await call(cloud, "PATCH", `/api/backends/${stored.json.id}`, {
      token,
      body: { options: { base_url: "https://h/fhir?access_token=abc" } },
    });
    assertEquals(patched.status, 422, patched.text);
    assertEquals(fields(patched), ["options.base_url"]);
    assertNoLeak((await call(cloud, "GET", "/api/backends", { token })).text, "the records");
  });
});

Deno.test("mcp create-backend: a URL with credentials is a tool error naming the field", async () => {
  await withCloud(async (cloud) => {
    const u = await makeUser(cloud, "ada@example.com");
    const svc = await service(cloud, u.apiToken);
    const mcp = await connectMcp(cloud, u.apiToken);
    try {
      const refused = errorText(
        await mcp.raw("create-backend", {
          name: "ehr",
          service_id: svc.id,
          type: "fhir",
          targets: [{ name: "b", url: "https://u:pw@h/" }],
        }),
      );
      assert(refused.startsWith("validation_failed: targets.0.url: "), refused);
      assert(refused.includes("cannot be stored in the cloud"), refused);
      assertNoLeak(refused, "the tool error");
      const token = errorText(
        await mcp.raw("create-backend", {
          name: "ehr",
          service_id: svc.id,
          type: "fhir",
          options: { base_url: "https://h/fhir?access_token=abc" },
        }),
      );
      assert(token.includes("options.base_url"), token);
      assertNoLeak(token, "the tool error");
      const ok = await mcp.call("create-backend", {
        name: "ehr",
        service_id: svc.id,
        type: "fhir",
        options: { base_url: "https://h/fhir?access_token=${FHIR_TOKEN}" },
      });
      assertEquals(ok.record.options.base_url, "https://h/fhir?access_token=${FHIR_TOKEN}");
    } finally {
      await mcp.close();
    }
  });
});

Deno.test("gateway upload: URL credentials are redacted before storage and named among the problems", async () => {
  await withCloud(async (cloud) => {
    const u = await makeUser(cloud, "ada@example.com");
    const payload = (await call(cloud, "POST", "/api/gateway/authorize", {
      token: u.apiToken,
      body: { gateway_code: "edge-old" },
    })).json;
    // What an older gateway (one that does not redact URLs) would upload.
    const local = `[backends.ehr]
service = "fhir"
[backends.ehr.options]
base_url = "https://h/fhir?access_token=abc"
[targets.b]
url = "https://u:pw@h/"
[middleware.auth]
type = "jwt_auth"
options = { jwks_url = "https://login.example.org/jwks?key=k3y", issuer = "https://i" }
`;
    const upload = await call(cloud, "PUT", "/api/gateway/config/local", {
      token: payload.machine_token,
      body: local,
      headers: { "content-type": "application/toml" },
    });
    assertEquals(upload.status, 200, upload.text);
    const named = upload.json.problems.filter((p: { message: string }) =>
      p.message.includes("credential inside a URL")
    );
    assertEquals(named.map((p: { path: string }) => p.path), [
      "backends.ehr.options.base_url",
      "targets.b.url",
      "middleware.auth.options.jwks_url",
    ]);
    assertNoLeak(upload.text, "the answer");
    const stored = await call(cloud, "GET", `/api/gateways/${payload.gateway_id}/reported-config`, {
      token: u.apiToken,
    });
    assertEquals(stored.status, 200);
    assertNoLeak(stored.text, "the stored configuration");
    assertMatch(stored.text, /base_url = "https:\/\/h\/fhir\?access_token=<redacted>"/);
  });
});
