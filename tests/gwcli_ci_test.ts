/**
 * gwcli in CI, without a browser login: an API token from `GWCLI_API_TOKEN` or `--token-file` for
 * the commands that call the cloud (token:get, api-token:list/revoke), checked with the cloud
 * first, never stored; a missing, empty, foreign or revoked token fails with what to do.
 */
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { call, makeUser, withCloud } from "./cloud_harness.ts";
import { expectExit, withGwcliHome } from "./gwcli_support.ts";

Deno.test("gwcli token:get and api-token:* with GWCLI_API_TOKEN or --token-file, without login", async () => {
  await withCloud(async (cloud) => {
    const ada = await makeUser(cloud, "ada@example.com", "Radiology");
    await withGwcliHome(async (home) => {
      // Without a token or a login: exit 3, advice to log in (unchanged).
      const none = expectExit(await home.run(["token:get", "-g", "edge-ci"]), 3);
      assertMatch(none.stderr, /not logged in/);

      const env = { env: { GWCLI_API_TOKEN: ada.apiToken } };
      const raw = expectExit(await home.run(["token:get", "-g", "edge-ci", "--raw"], env), 0);
      assertMatch(raw.stdout, /^eyJ[\w-]+\.[\w-]+\.[\w-]+\n$/);
      assertMatch(raw.stderr, /note: created gateway 'edge-ci'/);
      const gateways = await call(cloud, "GET", "/api/gateways", { token: ada.apiToken });
      assertEquals(gateways.json.items.map((g: { code: string }) => g.code), ["edge-ci"]);
      const listed = expectExit(await home.run(["api-token:list", "--json"], env), 0);
      assert(JSON.parse(listed.stdout).some((t: { name: string }) => t.name === "test"));
      assert(!listed.stdout.includes(ada.apiToken), "never the token text");

      const file = `${home.home}/ci-token`;
      await Deno.writeTextFile(file, `${ada.apiToken}\n`, { mode: 0o600 });
      const json = expectExit(
        await home.run(["token:get", "-g", "edge-ci", "--token-file", file]),
        0,
      );
      assertEquals(JSON.parse(json.stdout).gateway_code, "edge-ci");
      assert(!json.stderr.includes("created"), "the gateway exists now");
      // -v says where the token came from, never the token.
      const verbose = expectExit(
        await home.run(["token:get", "-g", "edge-ci", "--token-file", file, "-v"]),
        0,
      );
      assertMatch(verbose.stderr, /API token read from the token file .*ci-token/);
      assert(!verbose.stderr.includes(ada.apiToken));
      // A file others may read works, with a warning.
      await Deno.chmod(file, 0o644);
      const open = expectExit(
        await home.run(["token:get", "-g", "edge-ci", "--token-file", file, "--raw"]),
        0,
      );
      assertMatch(open.stderr, /readable by other users: chmod 600/);

      // Missing or empty files, and something that is not an API token: exit 2, nothing sent.
      const missing = expectExit(
        await home.run(["token:get", "-g", "edge-ci", "--token-file", `${home.home}/nope`]),
        2,
      );
      assertMatch(missing.stderr, /--token-file: cannot read .*\/nope/);
      await Deno.writeTextFile(`${home.home}/empty`, "\n");
      const empty = expectExit(
        await home.run(["token:get", "-g", "edge-ci", "--token-file", `${home.home}/empty`]),
        2,
      );
      assertMatch(empty.stderr, /is empty/);
      const foreign = expectExit(
        await home.run(["token:get", "-g", "edge-ci"], { env: { GWCLI_API_TOKEN: "s3cret" } }),
        2,
      );
      assertMatch(foreign.stderr, /GWCLI_API_TOKEN does not hold a cloud API token/);

      // A revoked token: exit 3, with how to get a new one (not "log in").
      const mine = JSON.parse(listed.stdout).find((t: { name: string }) => t.name === "test");
      expectExit(await home.run(["api-token:revoke", "--id", mine.id], env), 0, "revoke itself");
      const revoked = expectExit(await home.run(["token:get", "-g", "edge-ci"], env), 3);
      assertMatch(revoked.stderr, /refused the API token in GWCLI_API_TOKEN/);
      assertMatch(revoked.stderr, /api-token:create/);
      assert(!revoked.stderr.includes("gwcli login` to log in"), revoked.stderr);
    }, { GATEWAY_API_URL: cloud.url });
  });
});
