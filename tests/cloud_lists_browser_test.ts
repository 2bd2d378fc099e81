/**
 * The list pages in Debian's Chromium: every list (gateways, pipelines, each resource kind, API
 * tokens, the audit log, invitations) has a search, a filter and pages, each working with more
 * than one page of records (12 of the team's own and one another team shares, 10 per page). The
 * fleet page's empty charts have a round axis (1, not 0.91). Pages pass axe-core.
 */
import type { Page } from "playwright-core";
import { assertEquals, assertMatch } from "./assert.ts";
import { call, createExamples, makeUser, startTestCloud, type TestCloud } from "./cloud_harness.ts";
import { axeProblems, signInUi } from "./support/chromium.ts";
import { launchLeanChromium } from "./support/chromium_lean.ts";
import { requirePeer } from "./support/mod.ts";

const HAS_CHROMIUM = requirePeer("chromium", "chromium", "chromium");
const N = 12;

/** Creates through the API, failing on anything but 201. */
async function must(cloud: TestCloud, token: string, path: string, body: unknown) {
  const res = await call(cloud, "POST", path, { token, body });
  if (res.status !== 201) throw new Error(`${path}: ${res.status} ${res.text}`);
  return res.json;
}

/**
 * N records of every kind in the team of `token`, named `<prefix>_<i>` (gateways `edge-<i>`); even
 * ones are of one type, odd ones of another; pipelines 0 and 1 are placed on gateway edge-0.
 */
async function seed(cloud: TestCloud, token: string) {
  const made: Record<"gateways" | "services" | "networks" | "transforms", string[]> = {
    gateways: [],
    services: [],
    networks: [],
    transforms: [],
  };
  for (let i = 0; i < N; i++) {
    made.gateways.push((await must(cloud, token, "/api/gateways", { code: `edge-${i}` })).id);
    made.services.push(
      (await must(cloud, token, "/api/services", {
        name: `svc_${i}`,
        endpoint_types: ["fhir", "http"],
        backend_types: ["fhir", "http"],
      })).id,
    );
    made.networks.push(
      (await must(cloud, token, "/api/networks", { name: `net_${i}`, port: 9000 + i })).id,
    );
    made.transforms.push(
      (await must(cloud, token, "/api/transforms", {
        name: `tf_${i}`,
        spec: [{ operation: "shift", spec: { a: `b${i}` } }],
      })).id,
    );
  }
  for (let i = 0; i < N; i++) {
    const even = i % 2 === 0;
    const endpoint = await must(cloud, token, "/api/endpoints", {
      name: `ep_${i}`,
      service_id: made.services[0],
      type: even ? "fhir" : "http",
      options: { path_prefix: `/ep${i}` },
    });
    const backend = await must(cloud, token, "/api/backends", {
      name: `be_${i}`,
      service_id: made.services[0],
      type: even ? "fhir" : "http",
      targets: [{ name: "a", url: `http://10.0.0.${i + 1}:8080` }],
    });
    await must(cloud, token, "/api/middleware", {
      name: `mw_${i}`,
      ...(even
        ? { type: "transform", transform_id: made.transforms[i], options: { apply: "left" } }
        : { type: "headers", options: {} }),
    });
    await must(cloud, token, "/api/pipelines", {
      name: `pl_${i}`,
      gateway_id: i < 2 ? made.gateways[0] : null,
      endpoint_ids: [endpoint.id],
      backend_ids: [backend.id],
    });
  }
  return made;
}

/** The rows of a list's table. */
function rows(page: Page, table: string): Promise<number> {
  return page.locator(`[data-testid=${table}] tbody tr`).count();
}

/** Submits the list's search form and waits for the page it asked for. */
async function apply(page: Page, expect: (url: URL) => boolean): Promise<void> {
  await Promise.all([
    page.waitForURL(expect),
    page.click("[data-testid=list-controls] button[type=submit]"),
  ]);
}

/** A list page and what its search, filter and pages must show. */
interface ListCase {
  path: string;
  table: string;
  /** Rows in all (own and shared). */
  total?: number;
  search: string;
  searchRows: number;
  filter: { name: string; value: string; rows: number };
}

Deno.test({
  name: "web UI in Chromium: search, a filter and pages on every list; round chart axes",
  ignore: !HAS_CHROMIUM,
  fn: async () => {
    const cloud = await startTestCloud({
      rateLimits: { perToken: { limit: 100_000, windowSeconds: 60 } } as never,
    });
    const browser = await launchLeanChromium();
    try {
      const base = cloud.url;
      const ada = await makeUser(cloud, "ada@example.com", "Radiology");
      const bob = await makeUser(cloud, "bob@example.com", "Cardiology");
      const made = await seed(cloud, ada.apiToken);
      // One record of every kind shared by Bob's team: the "Owner" filter has something to do.
      const bobs = await createExamples(cloud, bob.apiToken);
      for (const [kind, record] of Object.entries(bobs)) {
        await must(cloud, bob.apiToken, "/api/shares", {
          resource_kind: kind,
          resource_id: record.id,
          team_id: ada.team.id,
          access: "read",
        });
      }
      // edge-0 reports: online; the others stay pending.
      const machine = (await call(cloud, "POST", "/api/gateway/authorize", {
        token: ada.apiToken,
        body: { gateway_code: "edge-0" },
      })).json;
      const status = await call(cloud, "POST", "/api/gateway/status", {
        token: machine.machine_token,
        body: { health: "healthy", software_version: "1.0.0", uptime_secs: 5 },
      });
      assertEquals(status.status, 200, status.text);
      // API tokens (the three first revoked) and invitations (the two first revoked).
      for (let i = 0; i < N; i++) {
        const t = await must(cloud, ada.userToken, "/api/tokens", { name: `tok_${i}` });
        if (i < 3) await call(cloud, "DELETE", `/api/tokens/${t.id}`, { token: ada.userToken });
        const inv = await must(cloud, ada.apiToken, "/api/team/invitations", {
          email: `inv${i}@example.com`,
        });
        if (i < 2) {
          await call(cloud, "DELETE", `/api/team/invitations/${inv.id}`, { token: ada.apiToken });
        }
      }

      const page = browser.page;
      await signInUi(page, base, "ada@example.com", ada.password);
      const cases: ListCase[] = [
        {
          path: "/gateways",
          table: "gateways",
          search: "edge-1",
          searchRows: 3,
          filter: { name: "status", value: "online", rows: 1 },
        },
        {
          path: "/pipelines",
          table: "pipelines",
          search: "pl_1",
          searchRows: 3,
          filter: { name: "gateway_id", value: made.gateways[0], rows: 2 },
        },
        {
          path: "/endpoints",
          table: "endpoints",
          search: "ep_1",
          searchRows: 3,
          filter: { name: "type", value: "fhir", rows: 7 },
        },
        {
          path: "/backends",
          table: "backends",
          search: "be_1",
          searchRows: 3,
          filter: { name: "type", value: "fhir", rows: 7 },
        },
        {
          path: "/middleware",
          table: "middleware",
          search: "mw_1",
          searchRows: 3,
          filter: { name: "type", value: "transform", rows: 7 },
        },
        {
          path: "/transforms",
          table: "transforms",
          search: "tf_1",
          searchRows: 3,
          filter: { name: "shared", value: "only", rows: 1 },
        },
        {
          path: "/services",
          table: "services",
          search: "svc_1",
          searchRows: 3,
          filter: { name: "shared", value: "only", rows: 1 },
        },
        {
          path: "/networks",
          table: "networks",
          search: "net_1",
          searchRows: 3,
          filter: { name: "shared", value: "only", rows: 1 },
        },
        {
          path: "/tokens",
          table: "tokens",
          search: "tok_1",
          searchRows: 3,
          filter: { name: "state", value: "revoked", rows: 3 },
        },
        {
          path: "/teams",
          table: "invitations",
          total: N,
          search: "inv1",
          searchRows: 3,
          filter: { name: "state", value: "revoked", rows: 2 },
        },
        {
          path: "/audit",
          table: "audit",
          total: 0,
          search: "pl_1",
          searchRows: 3,
          filter: { name: "action", value: "pipeline.", rows: 10 },
        },
      ];
      for (const c of cases) {
        const total = c.total ?? N + 1;
        const at = (url: URL) => url.pathname === c.path;
        await page.goto(`${base}${c.path}`);
        // Pages: 10 per page, then the rest.
        await page.selectOption("#list-limit", "10");
        await apply(page, (u) => at(u) && u.searchParams.get("limit") === "10");
        assertEquals(await rows(page, c.table), 10, `${c.path}: first page`);
        assertEquals(await page.textContent("[data-testid=page-number]"), "Page 1");
        await Promise.all([
          page.waitForURL((u) => at(u) && u.searchParams.get("page") === "2"),
          page.click("[data-testid=pager] a[rel=next]"),
        ]);
        assertEquals(await page.textContent("[data-testid=page-number]"), "Page 2", c.path);
        const second = await rows(page, c.table);
        if (total) assertEquals(second, total - 10, `${c.path}: second page`);
        else assertEquals(second > 0, true, `${c.path}: a second page`);
        await Promise.all([
          page.waitForURL((u) => at(u) && !u.searchParams.has("cursor")),
          page.click("[data-testid=pager] a:has-text('First page')"),
        ]);
        assertEquals(await rows(page, c.table), 10, `${c.path}: back on the first page`);
        // Search.
        await page.fill("#list-search", c.search);
        await apply(page, (u) => at(u) && u.searchParams.get("name") === c.search);
        assertEquals(await rows(page, c.table), c.searchRows, `${c.path}: search ${c.search}`);
        const texts = await page.locator(`[data-testid=${c.table}] tbody tr`).allTextContents();
        for (const t of texts) assertMatch(t, new RegExp(c.search.replace(".", "\\.")));
        await Promise.all([
          page.waitForURL((u) => at(u) && !u.searchParams.has("name")),
          page.click("[data-testid=list-controls] a:has-text('Clear')"),
        ]);
        // A filter (with the search cleared, 10 per page again).
        await page.selectOption("#list-limit", "10");
        await page.selectOption(`#filter-${c.filter.name}`, c.filter.value);
        await apply(page, (u) => at(u) && u.searchParams.get(c.filter.name) === c.filter.value);
        assertEquals(
          await rows(page, c.table),
          c.filter.rows,
          `${c.path}: ${c.filter.name}=${c.filter.value}`,
        );
        assertEquals(await axeProblems(page), [], `accessibility of ${page.url()}`);
      }

      // A cursor that was never handed out: back to the first page of the same search.
      await page.goto(`${base}/pipelines?name=pl_&cursor=bogus`);
      assertEquals(new URL(page.url()).search, "?name=pl_");

      // Empty charts (no rates yet): the axis reads 1.
      await page.goto(`${base}/fleet`);
      const axes = await page.locator("[data-testid=fleet-edge-3] [data-testid=axis-max]")
        .allTextContents();
      assertEquals(axes, ["1", "1", "1"]);
      assertEquals(await page.getByText("0.91").count(), 0);
    } finally {
      await browser.close();
      await cloud.stop();
    }
  },
});
