/**
 * API tokens without a browser: `gwcli api-token:create/list/revoke` after `gwcli login`, and the
 * operator's `cloud token:create` beside the running service; each token is then used against the
 * cloud's API and refused once revoked.
 */
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { call, makeUser, TEST_KEY_ENCRYPTION_KEY, withCloud } from "./cloud_harness.ts";
import { expectExit, seedLogin, withGwcliHome } from "./gwcli_support.ts";
import { withEnv } from "./support/mod.ts";
import { main } from "../cloud/main.ts";

Deno.test("gwcli api-token: create (shown once), list, use, revoke", async () => {
  await withCloud(async (cloud) => {
    const ada = await makeUser(cloud, "ada@example.com", "Radiology");
    await withGwcliHome(async (home) => {
      await seedLogin(home, cloud.url, ada.userToken);
      const created = expectExit(
        await home.run(["api-token:create", "-n", "ci-deploy", "-d", "30", "--raw"]),
        0,
        "api-token:create",
      );
      const token = created.stdout.trim();
      assertMatch(token, /^gwc_[A-Za-z0-9_-]{43}$/);
      assertEquals((await call(cloud, "GET", "/api/me", { token })).status, 200);

      const listed = expectExit(await home.run(["api-token:list", "--json"]), 0, "list");
      const items = JSON.parse(listed.stdout) as { id: string; name: string }[];
      const mine = items.find((t) => t.name === "ci-deploy")!;
      assert(mine, listed.stdout);
      assert(!listed.stdout.includes(token), "the list never shows the token text");
      const table = expectExit(await home.run(["api-token:list"]), 0, "list table").stdout;
      assertMatch(table, /ci-deploy/);

      const revoked = expectExit(await home.run(["api-token:revoke", "--id", mine.id]), 0);
      assertMatch(revoked.stdout, /Revoked API token 'ci-deploy'/);
      assertEquals((await call(cloud, "GET", "/api/me", { token })).status, 401);
      const unknown = await home.run(["api-token:revoke", "--id", crypto.randomUUID()]);
      assertEquals(unknown.code, 1);
      assertMatch(unknown.stderr, /no API token/);
    }, { GATEWAY_API_URL: cloud.url });
  });
});

Deno.test("cloud token:create: the operator makes a user's API token beside the running service", async () => {
  await withCloud(async (cloud) => {
    await makeUser(cloud, "ada@example.com", "Radiology");
    const printed: string[] = [];
    const log = console.log;
    console.log = (...args: unknown[]) => printed.push(args.join(" "));
    let code: number;
    try {
      code = await withEnv(
        { CLOUD_KEY_ENCRYPTION_KEY: TEST_KEY_ENCRYPTION_KEY },
        () =>
          main([
            "token:create",
            "--data-dir",
            cloud.dir,
            "--email",
            "ada@example.com",
            "--name",
            "ops",
            "--expires-in-days",
            "7",
          ]),
      );
    } finally {
      console.log = log;
    }
    assertEquals(code, 0);
    const token = printed.at(-1)!;
    assertMatch(token, /^gwc_/);
    assertEquals((await call(cloud, "GET", "/api/me", { token })).status, 200);
    const missing = await withEnv(
      { CLOUD_KEY_ENCRYPTION_KEY: TEST_KEY_ENCRYPTION_KEY },
      () =>
        main([
          "token:create",
          "--data-dir",
          cloud.dir,
          "--email",
          "nobody@example.com",
          "--name",
          "x",
        ]),
    );
    assertEquals(missing, 1);
  });
});
