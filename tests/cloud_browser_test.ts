/**
 * The web UI in Debian's Chromium (driven by playwright-core): sign up, sign in, create an API
 * token, approve a device login, switch teams, see a gateway's status.
 */
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { call, startTestCloud } from "./cloud_harness.ts";
import { requirePeer } from "./support/mod.ts";
import { startLeanChromium } from "./support/chromium_lean.ts";
import { DEVICE_GRANT_TYPE } from "../cloud/auth/mod.ts";

const HAS_CHROMIUM = requirePeer("chromium", "chromium", "chromium");

Deno.test({
  name:
    "web UI in Chromium: sign up, sign in, API token, device approval, team switch, gateway status",
  ignore: !HAS_CHROMIUM,
  fn: async () => {
    const cloud = await startTestCloud();
    // One Chromium without a profile on disk; the context is as fresh as a new profile.
    const chromiumProcess = await startLeanChromium();
    const browser = await chromiumProcess.newContext();
    try {
      const page = browser.pages()[0] ?? await browser.newPage();
      const base = cloud.url;
      const heading = async () => (await page.textContent("h1"))?.replace(/\s+/g, " ").trim();

      // Sign up: lands on the gateways page of the new team.
      await page.goto(`${base}/sign-up`);
      await page.fill("#name", "Ada Lovelace");
      await page.fill("#email", "ada@example.com");
      await page.fill("#password", "analytical engine");
      await page.fill("#team", "Radiology");
      await page.click("button[type=submit]");
      await page.waitForURL(`${base}/gateways`);
      assertEquals(await heading(), "Gateways of Radiology");
      const session = (await browser.cookies(base)).find((c) => c.name === "gw_session")!;
      assertEquals([session.httpOnly, session.sameSite], [true, "Lax"]);

      // API token: shown once, works against the API, never shown again.
      await page.goto(`${base}/tokens`);
      await page.fill("#token-name", "ci");
      await page.click("text=Create token");
      const token = (await page.textContent("[data-testid=new-token]"))!.trim();
      assertMatch(token, /^gwc_[A-Za-z0-9_-]{43}$/);
      const me = await call(cloud, "GET", "/api/me", { token });
      assertEquals([me.status, me.json.user.email, me.json.team.name], [
        200,
        "ada@example.com",
        "Radiology",
      ]);
      await page.goto(`${base}/tokens`);
      assert(!(await page.content()).includes(token), "the token text is not rendered again");
      assertMatch((await page.textContent("[data-testid=tokens]"))!, /ci.*gwc_.*active/s);

      // Sign out; the device page asks to sign in and comes back to the confirmation.
      await page.click("text=Sign out");
      await page.waitForURL(/\/sign-in$/);
      const device = await (await fetch(`${base}/oauth/device/code`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: "client_id=gwcli",
      })).json();
      await page.goto(device.verification_uri_complete);
      await page.waitForURL(/\/sign-in\?next=/);
      await page.fill("#email", "ada@example.com");
      await page.fill("#password", "wrong password!");
      await page.click("button[type=submit]");
      assertMatch((await page.textContent("[role=alert]"))!, /Wrong email or password/);
      await page.fill("#password", "analytical engine");
      await page.click("button[type=submit]");
      await page.waitForURL(/\/device\?user_code=/);
      assertEquals(await page.textContent("[data-testid=device-code]"), device.user_code);
      assertEquals(await page.textContent("[data-testid=device-team]"), "Radiology");
      await page.click("button:has-text('Approve')");
      assertEquals(await page.textContent("[data-testid=device-result]"), "Device approved");
      cloud.clock.advance(5_000);
      const polled = await (await fetch(`${base}/oauth/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({
          grant_type: DEVICE_GRANT_TYPE,
          device_code: device.device_code,
          client_id: "gwcli",
        }),
      })).json();
      const viaDevice = await call(cloud, "GET", "/api/me", { token: polled.access_token });
      assertEquals([viaDevice.status, viaDevice.json.user.email], [200, "ada@example.com"]);

      // A gateway reports its status; the gateways page shows it.
      const gw = (await call(cloud, "POST", "/api/gateway/authorize", {
        token,
        body: { gateway_code: "edge-berlin-1" },
      })).json;
      await page.goto(`${base}/gateways`);
      assertMatch((await page.textContent("[data-testid=gateways]"))!, /edge-berlin-1.*pending/s);
      const report = await call(cloud, "POST", "/api/gateway/status", {
        token: gw.machine_token,
        body: {
          health: "healthy",
          software_version: "0.12.0",
          uptime_secs: 120,
          pipelines: [{ name: "fhir", requests: 5, errors: 0 }],
        },
      });
      assertEquals(report.status, 200);
      await page.reload();
      assertEquals(
        await page.textContent("[data-testid=gateways] [data-testid=gateway-status]"),
        "online",
      );
      await page.click("text=edge-berlin-1");
      await page.waitForURL(`${base}/gateways/${gw.gateway_id}`);
      assertEquals(await page.textContent("[data-testid=software-version]"), "0.12.0");
      assertEquals(await page.textContent("h1 [data-testid=gateway-status]"), "online");
      assertMatch(
        (await page.textContent("[data-testid=desired-toml]"))!,
        /\[cloud\]\s+enabled = true/,
      );

      // Teams: create one (the current team stays), switch to it, then back with the header's
      // switcher.
      await page.goto(`${base}/teams`);
      await page.fill("#team-name", "Cardiology");
      await page.click("text=Create team");
      assertEquals(await page.textContent("[data-testid=team-name]"), "Radiology");
      assertEquals(await page.textContent("[data-testid=current-team]"), "Radiology");
      await Promise.all([
        page.waitForURL(`${base}/teams`),
        page.click("[data-testid=switch-offer] button"),
      ]);
      assertEquals(await page.textContent("[data-testid=current-team]"), "Cardiology");
      await page.goto(`${base}/gateways`);
      assertEquals(await heading(), "Gateways of Cardiology");
      assertMatch((await page.textContent("main"))!, /No gateways yet/);
      await page.selectOption("[data-testid=team-select]", { label: "Radiology" });
      await page.click("header button:has-text('Switch')");
      await page.waitForURL(`${base}/gateways`);
      assertEquals(await heading(), "Gateways of Radiology");
      assertMatch((await page.textContent("[data-testid=gateways]"))!, /edge-berlin-1/);
      await page.goto(`${base}/audit`);
      assertMatch((await page.textContent("[data-testid=audit]"))!, /gateway\.created/);
    } finally {
      await chromiumProcess.close();
      await cloud.stop();
    }
  },
});
