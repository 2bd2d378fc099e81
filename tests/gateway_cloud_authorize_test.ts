/**
 * `POST /admin/authorize` with user tokens (RS256 from the cloud's device login, HS256 with
 * GATEWAY_JWT_SECRET) and `POST /admin/update` landing in the cloud's reported configuration.
 */
import { SignJWT } from "jose";
import { assert, assertEquals, assertMatch } from "./assert.ts";
import {
  call,
  makeUser,
  startTestCloud,
  type TestCloud,
  type TestUser,
  withCloud,
} from "./cloud_harness.ts";
import { startCloudGateway, waitForCloud } from "./gateway_cloud_support.ts";
import { decideDevice, DEVICE_GRANT_TYPE } from "../cloud/auth/mod.ts";
import { USER_TOKEN_AUDIENCE } from "../shared/tokens.ts";

/** A user token from the device login (RFC 8628), approved by `u`, as gwcli gets it. */
async function deviceLoginToken(cloud: TestCloud, u: TestUser): Promise<string> {
  const form = async (path: string, params: Record<string, string>) =>
    await (await fetch(`${cloud.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(params),
    })).json();
  const start = await form("/oauth/device/code", { client_id: "gwcli" });
  assert(await decideDevice(cloud.server.services, start.user_code, "approved", u.user, u.team));
  cloud.clock.advance(start.interval * 1000);
  const granted = await form("/oauth/token", {
    grant_type: DEVICE_GRANT_TYPE,
    device_code: start.device_code,
    client_id: "gwcli",
  });
  assertEquals(granted.token_type, "Bearer", JSON.stringify(granted));
  return granted.access_token;
}

async function gatewaysOf(cloud: TestCloud, u: TestUser): Promise<string[]> {
  const list = await call(cloud, "GET", "/api/gateways", { token: u.apiToken });
  return list.json.items.map((g: { code: string }) => g.code);
}

Deno.test("POST /admin/authorize: an RS256 user token from the device login gets and stores a machine token", async () => {
  await withCloud(async (cloud) => {
    const u = await makeUser(cloud, "ada@example.com");
    const gw = await startCloudGateway(cloud, { cloudKeys: 'gateway_code = "edge-berlin-1"' });
    try {
      const userToken = await deviceLoginToken(cloud, u);
      const res = await gw.admin("POST", "/admin/authorize", {
        userToken: userToken,
      });
      assertEquals(res.status, 200, JSON.stringify(res.json));
      assertEquals(Object.keys(res.json).sort(), [
        "expires_at",
        "gateway_code",
        "gateway_id",
        "persisted",
        "stored",
      ]);
      assertEquals([res.json.stored, res.json.gateway_code, res.json.persisted], [
        true,
        "edge-berlin-1",
        false,
      ]);
      assertEquals(await gatewaysOf(cloud, u), ["edge-berlin-1"], "the cloud created the gateway");
      const c = await waitForCloud(gw, (c) => c.sync.state === "running", "the sync");
      assertEquals([c.token_source, c.gateway_id], ["authorize", res.json.gateway_id]);

      // An explicit code must match the configured one.
      const other = await gw.admin("POST", "/admin/authorize", {
        body: { gateway_code: "edge-other" },
        userToken: userToken,
      });
      assertEquals([other.status, other.json.error.code], [400, "bad_request"]);
      assertMatch(other.json.error.message, /gateway_code: this gateway is `edge-berlin-1`/);
      assert(!gw.logs.join("\n").includes(userToken), "the user token is never logged");
    } finally {
      await gw.stop();
    }
  });
});

Deno.test("POST /admin/authorize: the body's gateway_code, when none is configured", async () => {
  await withCloud(async (cloud) => {
    const u = await makeUser(cloud, "ada@example.com");
    const gw = await startCloudGateway(cloud);
    try {
      const res = await gw.admin("POST", "/admin/authorize", {
        body: { gateway_code: "edge-named" },
        userToken: u.userToken,
      });
      assertEquals([res.status, res.json.gateway_code], [200, "edge-named"]);
      const bad = await gw.admin("POST", "/admin/authorize", {
        body: { gateway_code: "../x" },
        userToken: u.userToken,
      });
      assertEquals([bad.status, bad.json.error.code], [400, "bad_request"]);
    } finally {
      await gw.stop();
    }
  });
});

Deno.test("POST /admin/authorize: missing, malformed, expired and foreign user tokens are 401 invalid_user_token", async () => {
  await withCloud(async (cloud) => {
    const u = await makeUser(cloud, "ada@example.com");
    const gw = await startCloudGateway(cloud);
    const other = await startTestCloud();
    try {
      const foreign = (await makeUser(other, "eve@example.com")).userToken;
      const cases: [string | undefined, RegExp][] = [
        [undefined, /"user_token"/],
        ["", /"user_token"/],
        ["not-a-jwt", /not a JWT/],
        [u.apiToken, /not a JWT/],
        [foreign, /a key the cloud service does not publish/],
      ];
      for (const [userToken, message] of cases) {
        const res = await gw.admin("POST", "/admin/authorize", { userToken, body: {} });
        assertEquals(
          [res.status, res.json.error.code],
          [401, "invalid_user_token"],
          message.source,
        );
        assertMatch(res.json.error.message, message);
      }
      cloud.clock.advance(25 * 3600 * 1000);
      const expired = await gw.admin("POST", "/admin/authorize", {
        userToken: u.userToken,
      });
      assertEquals(expired.status, 401);
      assertMatch(expired.json.error.message, /user token: expired/);
      assertEquals(await gatewaysOf(cloud, u), [], "the cloud was never asked");
      assertEquals((await gw.info()).cloud.authorized, false);
    } finally {
      await other.stop();
      await gw.stop();
    }
  });
});

Deno.test("POST /admin/authorize: HS256 user tokens need GATEWAY_JWT_SECRET and its signature", async () => {
  await withCloud(async (cloud) => {
    const u = await makeUser(cloud, "ada@example.com");
    const secret = "a-shared-secret-of-at-least-32-characters!";
    const hs256 = (key: string, claims: Record<string, unknown> = {}) =>
      new SignJWT({ token_use: "user", ...claims })
        .setProtectedHeader({ alg: "HS256" })
        .setIssuer(cloud.url)
        .setAudience(USER_TOKEN_AUDIENCE)
        .setSubject(u.user.id)
        .setIssuedAt(Math.floor(cloud.clock.now() / 1000))
        .setExpirationTime(Math.floor(cloud.clock.now() / 1000) + 3600)
        .sign(new TextEncoder().encode(key));
    const good = await hs256(secret);

    const without = await startCloudGateway(cloud);
    try {
      const res = await without.admin("POST", "/admin/authorize", {
        userToken: good,
      });
      assertEquals([res.status, res.json.error.code], [401, "invalid_user_token"]);
      assertMatch(res.json.error.message, /HS256, which needs GATEWAY_JWT_SECRET/);
    } finally {
      await without.stop();
    }

    const gw = await startCloudGateway(cloud, { env: { GATEWAY_JWT_SECRET: secret } });
    try {
      const wrong = await gw.admin("POST", "/admin/authorize", {
        userToken: await hs256("another-secret-another-secret-12345"),
      });
      assertEquals([wrong.status, wrong.json.error.code], [401, "invalid_user_token"]);
      assertMatch(wrong.json.error.message, /signature does not verify/);
      const machineUse = await gw.admin("POST", "/admin/authorize", {
        userToken: await hs256(secret, { token_use: "machine" }),
      });
      assertMatch(machineUse.json.error.message, /not a user token/);
      assertEquals(await gatewaysOf(cloud, u), [], "refused before the cloud is asked");

      // Valid for the gateway: it goes on to the cloud, which accepts RS256 user tokens and API
      // tokens only, and says so.
      const forwarded = await gw.admin("POST", "/admin/authorize", {
        userToken: good,
      });
      assertEquals([forwarded.status, forwarded.json.error.code], [401, "invalid_user_token"]);
      assertMatch(forwarded.json.error.message, /^the cloud service refused the user token: /);
      assert(!gw.logs.join("\n").includes(secret), "the secret is never logged");
    } finally {
      await gw.stop();
    }
  });
});

Deno.test("POST /admin/update: 409 without a token; then the local files land in the cloud's reported configuration, secrets redacted", async () => {
  await withCloud(async (cloud) => {
    const u = await makeUser(cloud, "ada@example.com");
    const dir = await Deno.makeTempDir({ prefix: "gw-cloud-update-" });
    await Deno.mkdir(`${dir}/pipelines`);
    const pipelineFile =
      '[endpoints.extra]\nservice = "http"\noptions = { path_prefix = "/extra" }\n\n' +
      '[backends.extra]\nservice = "echo"\n\n[pipelines.extra]\nendpoints = ["extra"]\n' +
      'backends = ["extra"]\n\n' +
      // An operator's literal credentials: they never leave the gateway.
      '[backends.archive]\nservice = "storage"\n[backends.archive.options]\n' +
      'root = "s3://archive/in"\nregion = "eu-central-1"\nread_pattern = "{path}"\n' +
      'access_key_id = "AKIAEXAMPLEKEYID"\nsecret_access_key = "LITERAL-S3-SECRET-abc123"\n';
    await Deno.writeTextFile(`${dir}/pipelines/extra.toml`, pipelineFile);
    const uploadedPipelineFile = pipelineFile
      .replace('"AKIAEXAMPLEKEYID"', '"<redacted>"')
      .replace('"LITERAL-S3-SECRET-abc123"', '"<redacted>"');
    const gw = await startCloudGateway(cloud, {
      dir,
      body: 'pipelines_path = "pipelines"\n# secret stays a placeholder: ${NOT_SENT}\n',
    });
    try {
      const none = await gw.admin("POST", "/admin/update");
      assertEquals([none.status, none.json.error.code], [409, "not_authorized"]);
      assertMatch(none.json.error.message, /run `gwcli gateway:authorize`/);

      const authorized = await gw.admin("POST", "/admin/authorize", {
        body: { gateway_code: "edge-up" },
        userToken: u.userToken,
      });
      assertEquals(authorized.status, 200);
      const res = await gw.admin("POST", "/admin/update");
      assertEquals(res.status, 200, JSON.stringify(res.json));
      const main = await Deno.readTextFile(gw.configFile);
      const expected =
        `${main}\n\n# ---- pipelines/extra.toml (pipelines_path) ----\n${uploadedPipelineFile}`;
      assertEquals(res.json.uploaded_bytes, new TextEncoder().encode(expected).byteLength);
      assertEquals(res.json.files, [gw.configFile, `${dir}/pipelines/extra.toml`]);
      assertEquals(res.json.problems, []);
      assertMatch(res.json.sha256, /^[0-9a-f]{64}$/);
      const reported = await call(
        cloud,
        "GET",
        `/api/gateways/${authorized.json.gateway_id}/reported-config`,
        { token: u.apiToken },
      );
      assertEquals(reported.status, 200);
      assertEquals(reported.text, expected);
      assertMatch(reported.text, /\$\{NOT_SENT\}/);
      assert(!reported.text.includes("LITERAL-S3-SECRET"), "the S3 secret is not uploaded");
      assert(!reported.text.includes("AKIAEXAMPLEKEYID"));
    } finally {
      await gw.stop();
    }
  });
});

Deno.test("the issuer is pinned to [cloud] url: a cloud whose base URL differs is refused for user and machine tokens", async () => {
  // The gateway reaches the service at 127.0.0.1, but the service signs as https://cloud.example.com.
  await withCloud(async (cloud) => {
    const u = await makeUser(cloud, "ada@example.com");
    const gw = await startCloudGateway(cloud);
    try {
      const user = await gw.admin("POST", "/admin/authorize", {
        userToken: u.userToken,
      });
      assertEquals([user.status, user.json.error.code], [401, "invalid_user_token"]);
      assertMatch(
        user.json.error.message,
        new RegExp(`not issued by the configured cloud service ${cloud.url}`),
      );
      const payload = (await call(cloud, "POST", "/api/gateway/authorize", {
        token: u.apiToken,
        body: { gateway_code: "edge-1" },
      })).json;
      const machine = await gw.admin("POST", "/admin/token", { body: payload });
      assertEquals([machine.status, machine.json.error.code], [401, "machine_token_rejected"]);
      assertMatch(machine.json.error.message, /issued by "https:\/\/cloud.example.com"/);
    } finally {
      await gw.stop();
    }
  }, { baseUrl: "https://cloud.example.com" });
});
