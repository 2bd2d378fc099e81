/**
 * The cloud's JOLT preview against specs built to freeze or flood it: many-star keys (exponential
 * for a backtracking matcher), a far-out default index (hundreds of megabytes of nulls) and a spec
 * nested 10,000 levels. Each is answered with a 4xx at once, and the cloud keeps answering others.
 */
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { call, makeUser, withCloud } from "./cloud_harness.ts";

Deno.test("cloud preview: pathological JOLT specs are answered at once with a 4xx; the cloud stays responsive", async () => {
  await withCloud(async (cloud) => {
    const { apiToken: token } = await makeUser(cloud, "ada@example.com");
    const preview = (spec: unknown, input: unknown) =>
      call(cloud, "POST", "/api/transforms/preview", { token, body: { spec, input } });

    // About 1.2 KB: a 30-star key against a key that almost matches.
    const starKey = "*a".repeat(30) + "*b";
    const stars = preview([{ operation: "shift", spec: { [starKey]: "out" } }], {
      ["a".repeat(1_000)]: 1,
    });
    const other = call(cloud, "GET", "/api/me", { token });
    const started = performance.now();
    const [s, o] = await Promise.all([stars, other]);
    assertEquals(s.status, 200, s.text);
    assertEquals(s.json.output, null, "no key matches: nothing is shifted");
    assertEquals(o.status, 200);
    assert(performance.now() - started < 5_000, "answered at once");

    const flood = await preview(
      [{ operation: "default", spec: { "items[]": { "99999999": 0 } } }],
      {},
    );
    assertEquals(flood.status, 422);
    assertMatch(flood.text, /array default index 99999999 is over the limit of 1000000/);
    assert(flood.text.length < 10_000, "no flood of nulls");

    let deep: unknown = "x";
    for (let i = 0; i < 10_000; i++) deep = { a: deep };
    const nested = await preview([{ operation: "shift", spec: deep }], {});
    assertEquals([nested.status, nested.json.error.code], [400, "spec_too_large"], nested.text);
    assertMatch(nested.text, /nested deeper than 128 levels/);
    assertEquals((await call(cloud, "GET", "/api/me", { token })).status, 200);
  });
});
