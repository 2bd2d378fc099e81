/**
 * A gateway whose files hold credentials inside URLs (a token in a `base_url` query, userinfo in a
 * target URL and in an S3 `endpoint`) uploads its configuration with `POST /admin/update`: the
 * cloud receives none of them, and the gateway's warning names the keys, never the values.
 */
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { call, makeUser, withCloud } from "./cloud_harness.ts";
import { LOCAL_ECHO, startCloudGateway } from "./gateway_cloud_support.ts";
import { withEnv } from "./support/mod.ts";

const BODY = `${LOCAL_ECHO}
[backends.ehr]
service = "fhir"
[backends.ehr.options]
base_url = "https://h/fhir?access_token=abc"

[backends.balanced]
service = "http"
targets = ["first"]
[targets.first]
url = "https://u:pw@h/"

[backends.archive]
service = "storage"
[backends.archive.options]
root = "s3://archive/in"
region = "eu-central-1"
read_pattern = "{path}"
endpoint = "https://k:s@s3.local"
access_key_id = "\${URL_TEST_S3_KEY_ID}"
secret_access_key = "\${URL_TEST_S3_SECRET}"
`;

Deno.test("POST /admin/update: credentials inside URLs are redacted before the upload; the warning names the keys", async () => {
  await withCloud(async (cloud) => {
    const u = await makeUser(cloud, "ada@example.com");
    // The S3 keys come from the process environment, as an operator should write them.
    const gw = await withEnv(
      { URL_TEST_S3_KEY_ID: "key-id", URL_TEST_S3_SECRET: "env-secret" },
      () => startCloudGateway(cloud, { body: BODY }),
    );
    try {
      const authorized = await gw.admin("POST", "/admin/authorize", {
        body: { gateway_code: "edge-urls" },
        userToken: u.userToken,
      });
      assertEquals(authorized.status, 200, JSON.stringify(authorized.json));
      const res = await gw.admin("POST", "/admin/update");
      assertEquals(res.status, 200, JSON.stringify(res.json));
      const reported = await call(
        cloud,
        "GET",
        `/api/gateways/${authorized.json.gateway_id}/reported-config`,
        { token: u.apiToken },
      );
      assertEquals(reported.status, 200);
      for (const leak of ["access_token=abc", "u:pw@", "k:s@"]) {
        assert(!reported.text.includes(leak), `the cloud received ${leak}`);
      }
      assertMatch(reported.text, /base_url = "https:\/\/h\/fhir\?access_token=<redacted>"/);
      assertMatch(reported.text, /url = "https:\/\/<redacted>:<redacted>@h\/"/);
      assertMatch(reported.text, /endpoint = "https:\/\/<redacted>:<redacted>@s3.local"/);
      // The cloud found nothing left to redact.
      assertEquals(res.json.problems, []);

      const warning = gw.logs.map((l) => JSON.parse(l)).find((l) =>
        l.level === "warn" && /redacted before the upload/.test(l.msg)
      );
      assert(warning, gw.logs.join("\n"));
      assertEquals(warning.keys, [
        "gateway.toml: backends.ehr.options.base_url",
        "gateway.toml: targets.first.url",
        "gateway.toml: backends.archive.options.endpoint",
      ]);
      const logged = gw.logs.join("\n");
      for (const leak of ["access_token=abc", "u:pw@", "k:s@"]) {
        assert(!logged.includes(leak), `the logs hold ${leak}`);
      }
    } finally {
      await gw.stop();
    }
  });
});
