/** Device login (RFC 8628) end to end over HTTP, with every error of the token endpoint. */
import { createRemoteJWKSet, jwtVerify } from "jose";
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { makeUser, type TestCloud, withCloud } from "./cloud_harness.ts";
import { decideDevice, DEVICE_GRANT_TYPE } from "../cloud/auth/mod.ts";
import { USER_TOKEN_AUDIENCE } from "../shared/tokens.ts";

async function form(cloud: TestCloud, path: string, params: Record<string, string>) {
  const res = await fetch(`${cloud.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(params),
  });
  return { status: res.status, headers: res.headers, json: await res.json() };
}

const start = (cloud: TestCloud) => form(cloud, "/oauth/device/code", { client_id: "gwcli" });
const poll = (cloud: TestCloud, deviceCode: string) =>
  form(cloud, "/oauth/token", {
    grant_type: DEVICE_GRANT_TYPE,
    device_code: deviceCode,
    client_id: "gwcli",
  });

Deno.test("device flow: pending, slow_down, approval, token verified with JWKS, then invalid_grant", async () => {
  await withCloud(async (cloud) => {
    const ada = await makeUser(cloud, "ada@example.com", "Radiology");
    const auth = await start(cloud);
    assertEquals(auth.status, 200);
    assertEquals(auth.headers.get("cache-control"), "no-store");
    assertMatch(auth.json.user_code, /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
    assertMatch(auth.json.device_code, /^[A-Za-z0-9_-]{43}$/);
    assertEquals(auth.json.verification_uri, `${cloud.url}/device`);
    assertEquals(
      auth.json.verification_uri_complete,
      `${cloud.url}/device?user_code=${auth.json.user_code}`,
    );
    assertEquals([auth.json.interval, auth.json.expires_in], [5, 600]);

    const first = await poll(cloud, auth.json.device_code);
    assertEquals([first.status, first.json.error], [400, "authorization_pending"]);
    const tooFast = await poll(cloud, auth.json.device_code);
    assertEquals([tooFast.status, tooFast.json.error], [400, "slow_down"]);
    assertMatch(tooFast.json.error_description, /at least 10 s/);
    cloud.clock.advance(5_000);
    const stillFast = await poll(cloud, auth.json.device_code);
    assertEquals(stillFast.json.error, "slow_down", "5 s is under the 10 s interval");
    assertMatch(stillFast.json.error_description, /at least 15 s/, "every slow_down adds 5 s");
    cloud.clock.advance(15_000);
    assertEquals((await poll(cloud, auth.json.device_code)).json.error, "authorization_pending");

    const s = cloud.server.services;
    assert(
      await decideDevice(s, auth.json.user_code.toLowerCase(), "approved", ada.user, ada.team),
    );
    assert(
      !(await decideDevice(s, auth.json.user_code, "denied", ada.user, ada.team)),
      "decided once",
    );
    cloud.clock.advance(15_000);
    const granted = await poll(cloud, auth.json.device_code);
    assertEquals(granted.status, 200);
    assertEquals([granted.json.token_type, granted.json.expires_in], ["Bearer", 86400]);
    const jwks = createRemoteJWKSet(new URL(`${cloud.url}/.well-known/jwks.json`));
    const { payload } = await jwtVerify(granted.json.access_token, jwks, {
      issuer: cloud.url,
      audience: USER_TOKEN_AUDIENCE,
      currentDate: new Date(cloud.clock.now()),
    });
    assertEquals([payload.sub, (payload.team as { id: string }).id], [ada.user.id, ada.team.id]);

    cloud.clock.advance(15_000);
    const again = await poll(cloud, auth.json.device_code);
    assertEquals([again.status, again.json.error], [400, "invalid_grant"]);
  });
});

Deno.test("device flow: access_denied, expired_token, and request errors", async () => {
  await withCloud(async (cloud) => {
    const ada = await makeUser(cloud, "ada@example.com");
    const s = cloud.server.services;
    const denied = await start(cloud);
    assert(await decideDevice(s, denied.json.user_code, "denied", ada.user, ada.team));
    const d = await poll(cloud, denied.json.device_code);
    assertEquals([d.status, d.json.error], [400, "access_denied"]);

    const late = await start(cloud);
    cloud.clock.advance(600_000);
    const e = await poll(cloud, late.json.device_code);
    assertEquals([e.status, e.json.error], [400, "expired_token"]);
    assert(
      !(await decideDevice(s, late.json.user_code, "approved", ada.user, ada.team)),
      "expired codes cannot be approved",
    );

    const wrongGrant = await form(cloud, "/oauth/token", {
      grant_type: "password",
      device_code: "x",
      client_id: "gwcli",
    });
    assertEquals(wrongGrant.json.error, "unsupported_grant_type");
    const missing = await form(cloud, "/oauth/token", {
      grant_type: DEVICE_GRANT_TYPE,
      client_id: "gwcli",
    });
    assertEquals(missing.json.error, "invalid_request");
    const unknown = await poll(cloud, "not-a-device-code");
    assertEquals(unknown.json.error, "invalid_grant");
    const client = await form(cloud, "/oauth/device/code", { client_id: "someone-else" });
    assertEquals([client.status, client.json.error], [401, "invalid_client"]);
    const foreignClient = await start(cloud);
    const stolen = await form(cloud, "/oauth/token", {
      grant_type: DEVICE_GRANT_TYPE,
      device_code: foreignClient.json.device_code,
      client_id: "other",
    });
    assertEquals(stolen.json.error, "invalid_grant");
    const json = await fetch(`${cloud.url}/oauth/device/code`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ client_id: "gwcli" }),
    });
    assertEquals(json.status, 200, "JSON parameters are accepted too");
    await json.body?.cancel();
  });
});

Deno.test("device flow: polling and code requests are rate limited per IP (429, Retry-After)", async () => {
  await withCloud(async (cloud) => {
    const auth = await start(cloud);
    assertEquals((await start(cloud)).status, 200);
    const third = await start(cloud);
    assertEquals([third.status, third.json.error], [429, "rate_limited"]);
    assert(Number(third.headers.get("retry-after")) >= 1);
    for (let i = 0; i < 2; i++) {
      assertEquals((await poll(cloud, auth.json.device_code)).status, 400);
    }
    const limited = await poll(cloud, auth.json.device_code);
    assertEquals(limited.status, 429);
    assertEquals(limited.headers.get("retry-after"), "30");
  }, {
    rateLimits: {
      deviceCodePerIp: { limit: 2, windowSeconds: 60 },
      devicePollPerIp: { limit: 2, windowSeconds: 60 },
    } as never,
  });
});
