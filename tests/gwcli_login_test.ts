/**
 * gwcli against the real cloud service: device login (RFC 8628) approved programmatically as the
 * browser would, verify, already-logged-in, token:get, logout, and the denied and expired flows.
 * The cloud answers `interval: 1`, which gwcli honours (5 s is only its fallback).
 */
import { decodeJwt } from "jose";
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { makeUser, type TestCloud, withCloud } from "./cloud_harness.ts";
import { decideDevice } from "../cloud/auth/mod.ts";
import { expectExit, type GwcliHome, seedLogin, withGwcliHome } from "./gwcli_support.ts";

const FAST = { deviceIntervalSeconds: 1 };

/** Starts `gwcli login`, approves (or denies) its user code, returns the finished run. */
async function loginWith(
  cloud: TestCloud,
  home: GwcliHome,
  decision: "approved" | "denied",
  who: Awaited<ReturnType<typeof makeUser>>,
) {
  const login = home.spawn(["login"]);
  const [, code] = await login.waitForStdout(/shows the code ([A-Z]{4}-[A-Z]{4})/);
  assert(await decideDevice(cloud.server.services, code, decision, who.user, who.team));
  return await login.finish();
}

Deno.test("gwcli login: device flow against the cloud, verify, already logged in, token:get, logout", async () => {
  await withCloud(async (cloud) => {
    const ada = await makeUser(cloud, "ada@example.com", "Radiology");
    await withGwcliHome(async (home) => {
      const login = expectExit(await loginWith(cloud, home, "approved", ada), 0, "login");
      assertMatch(login.stdout, new RegExp(`${cloud.url}/device\\?user_code=[A-Z]{4}-[A-Z]{4}`));
      assertMatch(login.stdout, /Could not open a browser \(turned off/);
      assertMatch(
        login.stdout,
        new RegExp(`Logged in to ${cloud.url} as ada <ada@example.com> in team Radiology\\.`),
      );
      assertMatch(login.stdout, /stored in the age-encrypted file .*credentials\.age/);
      assert(!login.stdout.includes("eyJ"), "login never prints the token");
      const stat = await Deno.stat(`${home.dir}/credentials.age`);
      assertEquals(stat.mode! & 0o777, 0o600);

      const again = expectExit(await home.run(["login"]), 0, "second login");
      assertMatch(
        again.stdout,
        /^Already logged in to .* as ada <ada@example.com> in team Radiology\./,
      );
      assert(!again.stdout.includes("user_code"), "no new device flow");

      const verify = expectExit(await home.run(["verify"]), 0, "verify");
      assertMatch(verify.stdout, /^The token is valid\./);
      assertMatch(verify.stdout, new RegExp(`Issuer: +${cloud.url}\n`));
      assertMatch(verify.stdout, new RegExp(`Subject: +${ada.user.id}\n`));
      assertMatch(verify.stdout, /Audience: +gateway-cloud-api\n/);
      assertMatch(verify.stdout, /User: +ada <ada@example.com>\n/);
      assertMatch(verify.stdout, new RegExp(`Team: +Radiology \\(${ada.team.id}\\)\n`));
      assertMatch(verify.stdout, /Expires: +\d{4}-\d\d-\d\dT/);
      assertMatch(verify.stdout, /Time left: +23h 59m|Time left: +1d/);

      const payload = expectExit(await home.run(["token:get", "-g", "edge-1"]), 0, "token:get");
      const json = JSON.parse(payload.stdout);
      assertEquals(json.gateway_code, "edge-1");
      assertMatch(json.gateway_id, /^[0-9a-f-]{36}$/);
      assertMatch(payload.stderr, /created gateway 'edge-1'/);
      const gw = await cloud.server.services.store.repos.gateways.findByUnique(
        ada.team.id,
        "edge-1",
      );
      assertEquals(gw?.id, json.gateway_id);

      const raw = expectExit(await home.run(["token:get", "--gateway-code", "edge-1", "--raw"]), 0);
      const token = raw.stdout.trim();
      assertEquals(raw.stdout, `${token}\n`, "--raw prints the token only");
      assertEquals(decodeJwt(token).gateway_code, "edge-1");
      assertEquals(decodeJwt(token).sub, json.gateway_id, "the existing gateway is reused");
      assertEquals(raw.stderr, "", "no 'created' note the second time");

      const bad = expectExit(await home.run(["token:get", "-g", "bad code"]), 2);
      assertMatch(bad.stderr, /invalid gateway code/);
      const missing = expectExit(await home.run(["token:get"]), 2);
      assertMatch(missing.stderr, /required option '-g, --gateway-code <CODE>'/);

      const logout = expectExit(await home.run(["logout"]), 0, "logout");
      assertMatch(logout.stdout, /Logged out: removed the token from the age-encrypted file/);
      const after = expectExit(await home.run(["verify"]), 3, "verify after logout");
      assertMatch(after.stderr, /not logged in/);
      assertMatch(after.stderr, /Run `gwcli login`/);
      const tokenAfter = expectExit(await home.run(["token:get", "-g", "edge-1"]), 3);
      assertMatch(tokenAfter.stderr, /not logged in/);
      assertMatch(expectExit(await home.run(["logout"]), 0).stdout, /Not logged in/);
    }, { GATEWAY_API_URL: cloud.url });
  }, FAST);
});

Deno.test("gwcli login: a denied request and an expired code fail with exit code 3", async () => {
  await withCloud(async (cloud) => {
    const ada = await makeUser(cloud, "ada@example.com");
    await withGwcliHome(async (home) => {
      const denied = expectExit(await loginWith(cloud, home, "denied", ada), 3, "denied login");
      assertMatch(denied.stderr, /the login was denied in the browser/);
      assert(!(await exists(`${home.dir}/credentials.age`)), "nothing stored");

      const expiring = home.spawn(["login"]);
      await expiring.waitForStdout(/shows the code/);
      const expired = expectExit(await expiring.finish(), 3, "expired login");
      assertMatch(expired.stderr, /the code expired before it was approved/);
      assertMatch(expired.stderr, /Run `gwcli login` to start again/);
    }, { GATEWAY_API_URL: cloud.url });
  }, { ...FAST, deviceCodeTtlSeconds: 2 });
});

Deno.test("gwcli login: a stored token from another cloud or with a bad signature starts a new flow", async () => {
  await withCloud(async (cloud) => {
    const ada = await makeUser(cloud, "ada@example.com", "Radiology");
    await withGwcliHome(async (home) => {
      expectExit(await loginWith(cloud, home, "approved", ada), 0, "first login");
      // The config file now points at the same service under another name: the issuer differs.
      const other = cloud.url.replace("127.0.0.1", "localhost");
      expectExit(await home.run(["config:set", "api-url", other]), 0);
      const verify = expectExit(await home.run(["verify"]), 3);
      assertMatch(verify.stderr, new RegExp(`the stored token is from ${cloud.url}`));
      const login = expectExit(await home.run(["login"]), 1, "login against a mismatched issuer");
      assertMatch(login.stdout, /The stored token is from/);
      assertMatch(login.stderr, new RegExp(`says its issuer is ${cloud.url}`));
      assertMatch(login.stderr, /gwcli config:set api-url/);
      expectExit(await home.run(["config:unset", "api-url"]), 0);
      expectExit(await home.run(["verify"]), 0, "back on the token's own cloud");

      // The token of a second service (another signing key, another issuer), stored as if it
      // came from this one: verification fails, and login replaces it.
      await withCloud(async (stranger) => {
        const eve = await makeUser(stranger, "eve@example.com");
        await seedLogin(home, cloud.url, eve.userToken);
      });
      const forged = expectExit(await home.run(["verify"]), 3, "verify of a foreign token");
      assertMatch(forged.stderr, /the stored token is not valid: /);
      const relogin = home.spawn(["login"]);
      const [, code] = await relogin.waitForStdout(/shows the code ([A-Z]{4}-[A-Z]{4})/);
      assert(await decideDevice(cloud.server.services, code, "approved", ada.user, ada.team));
      const done = expectExit(await relogin.finish(), 0, "login replacing an invalid token");
      assertMatch(done.stdout, /^The stored token is not valid: .*: logging in again\./m);
      expectExit(await home.run(["verify"]), 0);
    }, { GATEWAY_API_URL: cloud.url });
  }, FAST);
});

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}
