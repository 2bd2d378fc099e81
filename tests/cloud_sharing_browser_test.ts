/**
 * Records shared with another team, in Debian's Chromium: a pipeline and a transform that team A
 * (Radiology) shares read-only with team B (Cardiology) are listed in B's pages with A's name,
 * their pages have nothing to type into and no Save, and neither a crafted form post nor the API
 * lets B change them. Each page passes axe-core.
 */
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { call, createExamples, makeUser, startTestCloud } from "./cloud_harness.ts";
import { axeProblems, signInUi } from "./support/chromium.ts";
import { launchLeanChromium } from "./support/chromium_lean.ts";
import { requirePeer } from "./support/mod.ts";

const HAS_CHROMIUM = requirePeer("chromium", "chromium", "chromium");

Deno.test({
  name: "web UI in Chromium: records shared with a team are listed with their owner, read-only",
  ignore: !HAS_CHROMIUM,
  fn: async () => {
    const cloud = await startTestCloud({
      rateLimits: { perToken: { limit: 100_000, windowSeconds: 60 } } as never,
    });
    const browser = await launchLeanChromium();
    try {
      const a = await makeUser(cloud, "ada@example.com", "Radiology");
      const b = await makeUser(cloud, "bob@example.com", "Cardiology");
      const recs = await createExamples(cloud, a.apiToken);
      for (const kind of ["pipelines", "transforms"] as const) {
        const shared = await call(cloud, "POST", "/api/shares", {
          token: a.apiToken,
          body: {
            resource_kind: kind,
            resource_id: recs[kind].id,
            team_id: b.team.id,
            access: "read",
          },
        });
        assertEquals(shared.status, 201, shared.text);
      }
      const page = browser.page;
      const base = cloud.url;
      await signInUi(page, base, "bob@example.com", b.password);
      assertEquals(await page.textContent("[data-testid=current-team]"), "Cardiology");

      const pages = [
        { kind: "pipelines", name: recs.pipelines.name, url: `/pipelines/${recs.pipelines.id}` },
        {
          kind: "transforms",
          name: recs.transforms.name,
          url: `/transforms/${recs.transforms.id}/edit`,
        },
      ];
      for (const { kind, name, url } of pages) {
        // The list: the shared record, with the name of the team that owns it.
        await page.goto(`${base}/${kind}`);
        const row = page.locator(`[data-testid=${kind}] tbody tr`, { hasText: name });
        assertEquals(await row.count(), 1, `${kind}: listed`);
        assertEquals(await row.locator("[data-testid=owner-team]").textContent(), "Radiology");
        assertMatch((await row.textContent())!, /shared, read-only/);
        assertEquals(await axeProblems(page), [], `accessibility of /${kind}`);

        // Its page: read-only, nothing to type into, no Save.
        await Promise.all([page.waitForURL(`${base}${url}`), row.locator("a").first().click()]);
        assertMatch((await page.textContent("h1"))!, new RegExp(name));
        assertMatch((await page.textContent("[data-testid=shared-notice]"))!, /read-only/);
        assertEquals(
          await page.textContent("[data-testid=shared-notice] [data-testid=owner-team]"),
          "Radiology",
        );
        for (const control of ["input", "textarea", "select", "button", "form"]) {
          assertEquals(await page.locator(`main ${control}`).count(), 0, `${url}: no ${control}`);
        }
        assertEquals(await page.getByText("Save", { exact: true }).count(), 0, `${url}: no Save`);
        assertEquals(await axeProblems(page), [], `accessibility of ${url}`);
      }
      // The transform's spec is there to read.
      assertMatch(
        (await page.textContent("[data-testid=record-fields]"))!,
        /"operation": "shift"/,
      );

      // A form posted anyway, with B's own session and CSRF token: refused, nothing changes.
      const csrf = await page.locator("header input[name=_csrf]").first().inputValue();
      const forged = await browser.context.request.post(
        `${base}/transforms/${recs.transforms.id}/edit`,
        {
          form: { _csrf: csrf, name: "mine", description: "changed by B", spec: "[]", op: "save" },
          maxRedirects: 0,
        },
      );
      assertEquals(forged.status(), 403);
      const builder = await browser.context.request.post(
        `${base}/pipelines/${recs.pipelines.id}/edit`,
        { form: { _csrf: csrf, name: "mine", op: "publish" }, maxRedirects: 0 },
      );
      assertEquals(builder.status(), 404);
      for (const kind of ["pipelines", "transforms"] as const) {
        const patch = await call(cloud, "PATCH", `/api/${kind}/${recs[kind].id}`, {
          token: b.apiToken,
          body: { description: "changed by B" },
        });
        assertEquals([patch.status, patch.json.error.code], [403, "forbidden"], kind);
        const own = await call(cloud, "GET", `/api/${kind}/${recs[kind].id}`, {
          token: a.apiToken,
        });
        assertEquals([own.json.name, own.json.revision], [recs[kind].name, 1], kind);
      }
      // Not shared: not listed, not found.
      await page.goto(`${base}/backends`);
      assert(!(await page.textContent("main"))!.includes(recs.backends.name));
      const backend = await page.goto(`${base}/backends/${recs.backends.id}/edit`);
      assertEquals(backend?.status(), 404);
    } finally {
      await browser.close();
      await cloud.stop();
    }
  },
});
