/**
 * Teams and invitations in Debian's Chromium. Creating a team leaves the current team as it was
 * (the header always names it) and offers to switch. An owner invites an address, copies the link
 * shown once, and a new user creates their account from it and lands in the team; the link then
 * refuses a second use, and a revoked or expired invitation is refused too. Pages pass axe-core.
 */
import type { Page } from "playwright-core";
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { call, makeUser, startTestCloud } from "./cloud_harness.ts";
import { axeProblems, signInUi } from "./support/chromium.ts";
import { launchLeanChromium } from "./support/chromium_lean.ts";
import { requirePeer } from "./support/mod.ts";

const HAS_CHROMIUM = requirePeer("chromium", "chromium", "chromium");

/** The team the header names as current. */
function currentTeam(page: Page): Promise<string | null> {
  return page.textContent("[data-testid=current-team]");
}

/** Creates an invitation on the Team page and returns the link it shows once. */
async function invite(page: Page, base: string, email: string, days = "7"): Promise<string> {
  await page.goto(`${base}/teams`);
  await page.fill("#invite-email", email);
  await page.selectOption("#invite-days", days);
  await Promise.all([page.waitForLoadState("load"), page.click("text=Create invitation")]);
  const link = (await page.textContent("[data-testid=invitation-link]"))!.trim();
  assertMatch(link, new RegExp(`^${base}/invitations/accept\\?code=gwi_[A-Za-z0-9_-]{43}$`));
  return link;
}

/** Opens an invitation link and returns the refusal shown (or null when it can be used). */
async function refusal(
  page: Page,
  link: string,
): Promise<{ status?: number; text: string | null }> {
  const res = await page.goto(link);
  const refused = page.locator("[data-testid=invitation-refused]");
  return {
    status: res?.status(),
    text: await refused.count() ? await refused.textContent() : null,
  };
}

Deno.test({
  name: "web UI in Chromium: a new team does not switch; an invitation link works once",
  ignore: !HAS_CHROMIUM,
  fn: async () => {
    const cloud = await startTestCloud({
      rateLimits: { perToken: { limit: 100_000, windowSeconds: 60 } } as never,
    });
    const browser = await launchLeanChromium();
    try {
      const base = cloud.url;
      const ada = await makeUser(cloud, "ada@example.com", "Radiology");
      const page = browser.page;
      await signInUi(page, base, "ada@example.com", ada.password);
      assertEquals(await currentTeam(page), "Radiology");

      // A new team: created, not switched to; the switch is offered.
      await page.goto(`${base}/teams`);
      await page.fill("#team-name", "Cardiology");
      await Promise.all([page.waitForLoadState("load"), page.click("text=Create team")]);
      assertEquals(await currentTeam(page), "Radiology", "still in Radiology");
      assertEquals(await page.textContent("[data-testid=team-name]"), "Radiology");
      assertMatch((await page.textContent("[data-testid=switch-offer]"))!, /still in Radiology/);
      assertEquals(await axeProblems(page), [], "accessibility of /teams");
      await page.goto(`${base}/gateways`);
      assertEquals((await page.textContent("h1"))?.trim(), "Gateways of Radiology");
      // Switching is a step of its own, and the header says where one is.
      await page.goto(`${base}/teams`);
      await Promise.all([
        page.waitForURL(`${base}/teams`),
        page.click("[data-testid=teams] button:has-text('Switch to Cardiology')"),
      ]);
      assertEquals(await currentTeam(page), "Cardiology");
      await page.selectOption("[data-testid=team-select]", { label: "Radiology" });
      await Promise.all([
        page.waitForURL(`${base}/teams`),
        page.click("header button:has-text('Switch')"),
      ]);
      assertEquals(await currentTeam(page), "Radiology");

      // An invitation for an address without an account: the link, shown once.
      const link = await invite(page, base, "grace@example.com");
      assertMatch(
        (await page.locator("[data-testid=invitation-issued] a[href^='mailto:']").getAttribute(
          "href",
        ))!,
        /^mailto:grace%40example\.com\?subject=/,
      );
      assertEquals(await axeProblems(page), [], "accessibility of the new invitation");
      await page.goto(`${base}/teams`);
      assert(
        !(await page.content()).includes(link.split("code=")[1]),
        "the code is not shown again",
      );
      assertMatch(
        (await page.locator("[data-testid=invitations] tbody tr", { hasText: "grace@" })
          .textContent())!,
        /pending/,
      );

      // Grace opens it in her own browser and creates her account from it.
      const grace = await browser.another();
      await grace.goto(link);
      assertEquals(await grace.textContent("[data-testid=invitation-team]"), "Radiology");
      assertEquals(await grace.textContent("[data-testid=invitation-email]"), "grace@example.com");
      assertEquals(await axeProblems(grace), [], "accessibility of the invitation");
      await grace.fill("#name", "Grace Hopper");
      await grace.fill("#password", "compiler pioneer");
      await Promise.all([
        grace.waitForURL(`${base}/gateways`),
        grace.click("text=Create account and join"),
      ]);
      assertEquals((await grace.textContent("h1"))?.trim(), "Gateways of Radiology");
      assertEquals(await currentTeam(grace), "Radiology");
      const members = await call(cloud, "GET", "/api/team/members", { token: ada.apiToken });
      assertEquals(
        members.json.items.map((m: { user: { email: string }; role: string }) =>
          `${m.user.email}:${m.role}`
        ).sort(),
        ["ada@example.com:owner", "grace@example.com:member"],
      );

      // Used once: refused afterwards, signed in or not.
      const again = await refusal(grace, link);
      assertEquals(again.status, 410);
      assertMatch(again.text!, /already used/);
      const stranger = await browser.another();
      assertMatch((await refusal(stranger, link)).text!, /already used/);
      await page.goto(`${base}/teams`);
      assertMatch(
        (await page.locator("[data-testid=invitations] tbody tr", { hasText: "grace@" })
          .textContent())!,
        /accepted/,
      );

      // Revoked: refused.
      const revokedLink = await invite(page, base, "ivan@example.com");
      await page.goto(`${base}/teams`);
      await Promise.all([
        page.waitForLoadState("load"),
        page.click("button:has-text('Revoke ivan@example.com')"),
      ]);
      const revoked = await refusal(stranger, revokedLink);
      assertEquals(revoked.status, 410);
      assertMatch(revoked.text!, /revoked/);

      // An unknown code: refused, with the form to paste another.
      const unknown = await refusal(
        stranger,
        `${base}/invitations/accept?code=gwi_${"A".repeat(43)}`,
      );
      assertEquals(unknown.status, 404);
      assertMatch(unknown.text!, /not found/);

      // Expired: a one-day invitation, a day and a minute later (sessions have ended by then).
      const shortLink = await invite(page, base, "judy@example.com", "1");
      assertEquals((await refusal(stranger, shortLink)).text, null, "usable at first");
      cloud.clock.advance(86_400_000 + 60_000);
      const expired = await refusal(stranger, shortLink);
      assertEquals(expired.status, 410);
      assertMatch(expired.text!, /expired/);
    } finally {
      await browser.close();
      await cloud.stop();
    }
  },
});
