/**
 * List pages kept per team revision (cloud/api/list_cache.ts): a page asked again is the same,
 * and every change of the team's records (create, update, delete) shows in the next answer;
 * another team's page is its own.
 */
import { assertEquals } from "./assert.ts";
import { call, makeUser, withCloud } from "./cloud_harness.ts";

const LIMITS = { rateLimits: { perToken: { limit: 100_000, windowSeconds: 60 } } as never };

Deno.test("list cache: changes of the team's records show in the next page", async () => {
  await withCloud(async (cloud) => {
    const a = await makeUser(cloud, "ada@example.com", "A");
    const b = await makeUser(cloud, "bob@example.com", "B");
    const names = async (token: string, query = "") =>
      ((await call(cloud, "GET", `/api/transforms?limit=1000${query}`, { token })).json.items as {
        name: string;
      }[]).map((x) => x.name);
    const create = async (token: string, name: string) =>
      (await call(cloud, "POST", "/api/transforms", {
        token,
        body: { name, spec: [{ operation: "shift", spec: { a: "b" } }] },
      })).json;
    const first = await create(a.apiToken, "t_1");
    assertEquals(await names(a.apiToken), ["t_1"]);
    assertEquals(await names(a.apiToken), ["t_1"]);
    await create(a.apiToken, "t_2");
    assertEquals(await names(a.apiToken), ["t_1", "t_2"]);
    // A filter is a query of its own.
    assertEquals(await names(a.apiToken, "&name=2"), ["t_2"]);
    const renamed = await call(cloud, "PATCH", `/api/transforms/${first.id}`, {
      token: a.apiToken,
      body: { name: "t_renamed" },
    });
    assertEquals(renamed.status, 200, renamed.text);
    assertEquals(await names(a.apiToken), ["t_renamed", "t_2"]);
    assertEquals(await names(a.apiToken, "&name=2"), ["t_2"]);
    assertEquals(
      (await call(cloud, "DELETE", `/api/transforms/${first.id}`, { token: a.apiToken })).status,
      204,
    );
    assertEquals(await names(a.apiToken), ["t_2"]);
    // Another team's page is its own, asked the same way.
    assertEquals(await names(b.apiToken), []);
    await create(b.apiToken, "b_1");
    assertEquals(await names(b.apiToken), ["b_1"]);
    assertEquals(await names(a.apiToken), ["t_2"]);
  }, LIMITS);
});
