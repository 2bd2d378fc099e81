/**
 * The list query parameters of the REST API that the web UI's lists use too: `shared` (the
 * team's own records, then those shared with it, across page boundaries), a gateway's `status`,
 * the API token list's `name`, `state` and pages, the audit log's `name`.
 */
import { assert, assertEquals } from "./assert.ts";
import { call, createExamples, makeUser, type TestCloud, withCloud } from "./cloud_harness.ts";

const LIMITS = { rateLimits: { perToken: { limit: 100_000, windowSeconds: 60 } } as never };

/** Every page of `path` (`limit` per page), following `next_cursor`. */
async function allPages(cloud: TestCloud, token: string, path: string, limit: number) {
  const pages: { id: string; access?: string; team_name?: string; name: string }[][] = [];
  let cursor: string | null = null;
  do {
    const sep = path.includes("?") ? "&" : "?";
    const url: string = `${path}${sep}limit=${limit}${
      cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""
    }`;
    const res = await call(cloud, "GET", url, { token });
    assertEquals(res.status, 200, `${url}: ${res.text}`);
    pages.push(res.json.items);
    cursor = res.json.next_cursor;
    assert(pages.length < 50, "pages end");
  } while (cursor);
  return pages;
}

Deno.test("lists: shared=include pages through own records, then shared ones, with their team", async () => {
  await withCloud(async (cloud) => {
    const a = await makeUser(cloud, "ada@example.com", "A");
    const b = await makeUser(cloud, "bob@example.com", "B");
    const own: string[] = [];
    for (let i = 0; i < 5; i++) {
      own.push(
        (await call(cloud, "POST", "/api/transforms", {
          token: b.apiToken,
          body: { name: `b_${i}`, spec: [{ operation: "shift", spec: { a: "b" } }] },
        })).json.id,
      );
    }
    const shared: string[] = [];
    for (let i = 0; i < 4; i++) {
      const t = (await call(cloud, "POST", "/api/transforms", {
        token: a.apiToken,
        body: { name: `a_${i}`, spec: [{ operation: "shift", spec: { a: "b" } }] },
      })).json;
      // a_3 is not shared: it never shows.
      if (i === 3) continue;
      shared.push(t.id);
      await call(cloud, "POST", "/api/shares", {
        token: a.apiToken,
        body: {
          resource_kind: "transforms",
          resource_id: t.id,
          team_id: b.team.id,
          access: "read",
        },
      });
    }
    // Page sizes that end inside the own records, on their last one, and past them.
    for (const limit of [2, 5, 3, 100]) {
      const pages = await allPages(cloud, b.apiToken, "/api/transforms?shared=include", limit);
      const items = pages.flat();
      assertEquals(items.map((x) => x.id), [...own, ...shared], `limit ${limit}`);
      assert(pages.every((p) => p.length > 0 && p.length <= limit), `limit ${limit}: page sizes`);
      assertEquals(
        items.map((x) => `${x.access}:${x.team_name}`),
        [...own.map(() => "owner:B"), ...shared.map(() => "read:A")],
      );
    }
    const only = (await allPages(cloud, b.apiToken, "/api/transforms?shared=only", 2)).flat();
    assertEquals(only.map((x) => x.id), shared);
    const searched = await call(cloud, "GET", "/api/transforms?shared=include&name=_1", {
      token: b.apiToken,
    });
    assertEquals(searched.json.items.map((x: { name: string }) => x.name), ["b_1", "a_1"]);
    // The default stays the team's own records, as before.
    const plain = await call(cloud, "GET", "/api/transforms", { token: b.apiToken });
    assertEquals(plain.json.items.map((x: { id: string }) => x.id), own);
    assertEquals("access" in plain.json.items[0], false);
    // Bad values.
    for (const q of ["shared=all", "shared=only&cursor=o.x", "shared=include&cursor=nonsense"]) {
      const bad = await call(cloud, "GET", `/api/transforms?${q}`, { token: b.apiToken });
      assertEquals([bad.status, bad.json.error.code], [422, "validation_failed"], q);
    }
  }, LIMITS);
});

Deno.test("lists: gateway status, API token name/state/pages, audit search", async () => {
  await withCloud(async (cloud) => {
    const a = await makeUser(cloud, "ada@example.com", "A");
    await createExamples(cloud, a.apiToken);
    const machine = (await call(cloud, "POST", "/api/gateway/authorize", {
      token: a.apiToken,
      body: { gateway_code: "edge-2" },
    })).json;
    await call(cloud, "POST", "/api/gateway/status", {
      token: machine.machine_token,
      body: { health: "healthy", software_version: "1", uptime_secs: 1 },
    });
    const status = async (q: string) =>
      (await call(cloud, "GET", `/api/gateways?${q}`, { token: a.apiToken })).json.items.map((
        g: { code: string },
      ) => g.code);
    assertEquals(await status("status=online"), ["edge-2"]);
    assertEquals(await status("status=pending"), ["edge-berlin-1"]);
    assertEquals(await status("status=online&name=berlin"), []);
    assertEquals(
      (await call(cloud, "GET", "/api/gateways?status=up", { token: a.apiToken })).status,
      422,
    );

    for (let i = 0; i < 5; i++) {
      const t = await call(cloud, "POST", "/api/tokens", {
        token: a.userToken,
        body: { name: `ci_${i}`, expires_in_days: i === 4 ? 1 : null },
      });
      if (i === 0) await call(cloud, "DELETE", `/api/tokens/${t.json.id}`, { token: a.userToken });
    }
    cloud.clock.advance(86_400_000 + 1000);
    const tokens = async (q: string) =>
      (await call(cloud, "GET", `/api/tokens?${q}`, { token: a.apiToken })).json.items.map((
        t: { name: string },
      ) => t.name);
    assertEquals(await tokens("state=revoked"), ["ci_0"]);
    assertEquals(await tokens("state=expired"), ["ci_4"]);
    assertEquals(await tokens("state=active&name=CI_"), ["ci_3", "ci_2", "ci_1"]);
    const paged = (await allPages(cloud, a.apiToken, "/api/tokens?name=ci_", 2)).flat();
    assertEquals(paged.map((t) => t.name), ["ci_4", "ci_3", "ci_2", "ci_1", "ci_0"]);
    assertEquals(
      (await call(cloud, "GET", "/api/tokens?state=lost", { token: a.apiToken })).status,
      422,
    );

    const audit = await call(cloud, "GET", "/api/audit?name=fhir_ingest", { token: a.apiToken });
    assertEquals(
      audit.json.items.map((e: { action: string }) => e.action),
      ["pipeline.created"],
    );
  }, LIMITS);
});
