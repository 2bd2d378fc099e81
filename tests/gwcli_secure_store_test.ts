/**
 * gwcli's secure storage end to end: the keychain fallback (the real `@napi-rs/keyring` on a
 * machine without a Secret Service), migration of a legacy auth.json, and the age file checked
 * against the reference `age` tool (Debian package `age`) in both directions.
 */
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { makeUser, withCloud } from "./cloud_harness.ts";
import { expectExit, type GwcliHome, withGwcliHome } from "./gwcli_support.ts";
import { requirePeer, runCommand, startSecretService } from "./support/mod.ts";

const hasAge = requirePeer("gwcli age-file tests", "age", "age") &&
  requirePeer("gwcli age-file tests", "age-keygen", "age");

async function mode(path: string): Promise<number> {
  return (await Deno.stat(path)).mode! & 0o777;
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}

async function ageDecrypt(home: GwcliHome, identityFile: string): Promise<Record<string, unknown>> {
  const r = await runCommand("age", ["-d", "-i", identityFile, `${home.dir}/credentials.age`]);
  assertEquals(r.code, 0, r.stderr);
  return JSON.parse(r.stdout);
}

Deno.test({
  name:
    "gwcli secure store: legacy auth.json migrated into a real age file (decrypted by age), removed",
  ignore: !hasAge,
  fn: async () => {
    await withCloud(async (cloud) => {
      const ada = await makeUser(cloud, "ada@example.com", "Radiology");
      await withGwcliHome(async (home) => {
        await Deno.mkdir(home.dir, { recursive: true });
        await Deno.writeTextFile(`${home.dir}/auth.json`, JSON.stringify({ token: ada.userToken }));
        const verify = expectExit(await home.run(["verify"]), 0, "verify with a legacy file");
        assertMatch(verify.stdout, /^The token is valid\./);
        assertMatch(
          verify.stderr,
          /^note: moved the token of the legacy .*\/\.gwcli\/auth\.json to the age-encrypted file .*credentials\.age$/m,
        );
        assert(!(await exists(`${home.dir}/auth.json`)), "the legacy file is removed");
        assertEquals(await mode(`${home.dir}/credentials.age`), 0o600);
        assertEquals(await mode(`${home.dir}/identity.txt`), 0o600);

        const bytes = await Deno.readFile(`${home.dir}/credentials.age`);
        assertEquals(
          new TextDecoder().decode(bytes.subarray(0, 22)),
          "age-encryption.org/v1\n",
          "binary age format",
        );
        assert(!new TextDecoder().decode(bytes).includes(ada.userToken.slice(0, 20)));
        const identity = await Deno.readTextFile(`${home.dir}/identity.txt`);
        assertMatch(
          identity,
          /^# created: .*\n# public key: age1[0-9a-z]+\nAGE-SECRET-KEY-1[0-9A-Z]+\n$/,
        );
        const stored = await ageDecrypt(home, `${home.dir}/identity.txt`);
        assertEquals(stored.access_token, ada.userToken);
        assertEquals(stored.api_url, cloud.url);
        assertEquals(stored.source, "legacy_auth_json");

        const again = expectExit(await home.run(["verify"]), 0);
        assertEquals(again.stderr, "", "migrated once");
        expectExit(await home.run(["logout"]), 0);
        assert(!(await exists(`${home.dir}/credentials.age`)));
      }, { GATEWAY_API_URL: cloud.url });
    });
  },
});

Deno.test({
  name: "gwcli secure store: reads what age encrypted, with GWCLI_ENCRYPTION_KEY (bare or base64)",
  ignore: !hasAge,
  fn: async () => {
    await withCloud(async (cloud) => {
      const ada = await makeUser(cloud, "ada@example.com");
      await withGwcliHome(async (home) => {
        await Deno.mkdir(home.dir, { recursive: true, mode: 0o700 });
        const keyFile = `${home.home}/key.txt`;
        expectExit(await runCommand("age-keygen", ["-o", keyFile]), 0, "age-keygen");
        const identity = (await Deno.readTextFile(keyFile)).split("\n").find((l) =>
          l.startsWith("AGE-SECRET-KEY-1")
        )!;
        const recipient = (await runCommand("age-keygen", ["-y", keyFile])).stdout.trim();
        const credentials = JSON.stringify({
          access_token: ada.userToken,
          token_type: "Bearer",
          api_url: cloud.url,
          obtained_at: new Date().toISOString(),
          source: "device_login",
        });
        await Deno.writeTextFile(`${home.home}/plain.json`, credentials);
        expectExit(
          await runCommand("age", [
            "-r",
            recipient,
            "-o",
            `${home.dir}/credentials.age`,
            `${home.home}/plain.json`,
          ]),
          0,
          "age -r",
        );

        const bare = expectExit(
          await home.run(["verify"], { env: { GWCLI_ENCRYPTION_KEY: identity } }),
          0,
          "verify with the bare key",
        );
        assertMatch(bare.stdout, /User: +ada <ada@example.com>/);
        const encoded = btoa(await Deno.readTextFile(keyFile));
        expectExit(
          await home.run(["verify"], { env: { GWCLI_ENCRYPTION_KEY: encoded } }),
          0,
          "verify with the base64 key file",
        );
        assert(!(await exists(`${home.dir}/identity.txt`)), "no identity file with the env key");

        const noKey = expectExit(await home.run(["verify"]), 3, "verify without the key");
        assertMatch(
          noKey.stderr,
          /cannot decrypt .*credentials\.age: its identity .*identity\.txt is missing/,
        );
        const other = `${home.home}/other.txt`;
        await runCommand("age-keygen", ["-o", other]);
        const otherKey = (await Deno.readTextFile(other)).split("\n").find((l) =>
          l.startsWith("AGE-SECRET-KEY-1")
        )!;
        const wrong = expectExit(
          await home.run(["verify"], { env: { GWCLI_ENCRYPTION_KEY: otherKey } }),
          3,
          "verify with another key",
        );
        assertMatch(wrong.stderr, /cannot decrypt .* with the identity from GWCLI_ENCRYPTION_KEY/);
        const garbage = expectExit(
          await home.run(["verify"], { env: { GWCLI_ENCRYPTION_KEY: "not a key" } }),
          2,
        );
        assertMatch(garbage.stderr, /GWCLI_ENCRYPTION_KEY is not an age identity/);

        // gwcli writes with the env key; age decrypts with the same key.
        expectExit(await home.run(["logout"]), 0);
        await Deno.writeTextFile(
          `${home.dir}/auth.json`,
          JSON.stringify({ access_token: ada.userToken }),
        );
        expectExit(await home.run(["verify"], { env: { GWCLI_ENCRYPTION_KEY: identity } }), 0);
        assertEquals((await ageDecrypt(home, keyFile)).access_token, ada.userToken);
      }, { GATEWAY_API_URL: cloud.url });
    });
  },
});

Deno.test("gwcli secure store: an unreadable legacy file stays (warning), logout removes it; bad store mode", async () => {
  await withGwcliHome(async (home) => {
    await Deno.mkdir(home.dir, { recursive: true });
    await Deno.writeTextFile(`${home.dir}/auth.json`, '{"something": 1}');
    const r = expectExit(await home.run(["verify"]), 3);
    assertMatch(
      r.stderr,
      /warning: .*auth\.json holds no token that gwcli can read; it was left in place/,
    );
    assertMatch(r.stderr, /not logged in/);
    assert(await exists(`${home.dir}/auth.json`));
    const logout = expectExit(await home.run(["logout"]), 0);
    assertMatch(logout.stdout, /removed the token from the legacy file .*auth\.json/);
    assert(!(await exists(`${home.dir}/auth.json`)));
    const bad = expectExit(await home.run(["verify"], { env: { GWCLI_SECURE_STORE: "vault" } }), 2);
    assertMatch(bad.stderr, /GWCLI_SECURE_STORE must be auto, keychain or file/);
  });
});

const linux = Deno.build.os === "linux";
const hasKeyctl = linux && requirePeer("gwcli headless keychain test", "keyctl", "keyutils");
const hasSecretService = linux &&
  requirePeer("gwcli Secret Service test", "dbus-daemon", "dbus") &&
  requirePeer("gwcli Secret Service test", "gnome-keyring-daemon", "gnome-keyring") &&
  requirePeer("gwcli Secret Service test", "secret-tool", "libsecret-tools");

/** A headless gwcli run: no D-Bus, and a kernel session keyring of its own (a new SSH login). */
const NEW_SESSION = ["keyctl", "session", "-"];

Deno.test({
  name:
    "gwcli secure store: headless Linux (no Secret Service) stores the token in the age file, which the next process reads",
  // The keyring module's default falls back to the kernel keyring, which accepts the write and
  // gives it back to the same process: gwcli said "stored" and the next login session had no
  // token. The kernel keyring is never used; the age file is, with a note.
  ignore: !hasKeyctl,
  fn: async () => {
    await withCloud(async (cloud) => {
      const ada = await makeUser(cloud, "ada@example.com");
      await withGwcliHome(async (home) => {
        await Deno.mkdir(home.dir, { recursive: true });
        await Deno.writeTextFile(`${home.dir}/auth.json`, ada.userToken);
        const env = { GWCLI_SECURE_STORE: "auto" };
        const first = expectExit(
          await home.run(["verify", "-v"], { env, prefix: NEW_SESSION }),
          0,
          "the first verify",
        );
        assertMatch(first.stderr, /\* OS keychain .*(unavailable|failed)/);
        assertMatch(first.stderr, /moved the token of the legacy .* to the age-encrypted file/);
        assertMatch(first.stdout, /Stored in: +age-encrypted file .*credentials\.age/);

        const next = expectExit(
          await home.run(["verify"], { env, prefix: NEW_SESSION }),
          0,
          "a verify in the next login session",
        );
        assertMatch(next.stdout, /^The token is valid\./);
        assertMatch(next.stdout, /Stored in: +age-encrypted file .*credentials\.age/);
        const keys = await runCommand("keyctl", ["show", "@u"]);
        assert(!/gwcli/.test(keys.stdout), `no gwcli key in the kernel keyring:\n${keys.stdout}`);
      }, { GATEWAY_API_URL: cloud.url });
    });
  },
});

Deno.test({
  name:
    "gwcli secure store: with a Secret Service (D-Bus + gnome-keyring) the token is in the keychain for the next process",
  ignore: !hasSecretService,
  fn: async () => {
    await withCloud(async (cloud) => {
      const ada = await makeUser(cloud, "ada@example.com");
      await withGwcliHome(async (home) => {
        const secrets = await startSecretService(home.home, home.home);
        try {
          await Deno.mkdir(home.dir, { recursive: true });
          await Deno.writeTextFile(`${home.dir}/auth.json`, ada.userToken);
          const env = { GWCLI_SECURE_STORE: "auto", ...secrets.env };
          const first = expectExit(await home.run(["verify"], { env }), 0, "the first verify");
          assertMatch(first.stderr, /moved the token of the legacy .* to the OS keychain/);
          assert(
            !(await exists(`${home.dir}/credentials.age`)),
            "no age file next to the keychain",
          );

          const next = expectExit(await home.run(["verify"], { env }), 0, "the next verify");
          assertMatch(next.stdout, /^The token is valid\./);
          assertMatch(next.stdout, /Stored in: +OS keychain/);

          // The Secret Service itself holds it (read with libsecret's own client).
          const secretTool = () =>
            runCommand("secret-tool", ["lookup", "service", "gwcli", "username", "user-token"], {
              env: { ...home.env, ...secrets.env },
            });
          const lookup = await secretTool();
          assertEquals(lookup.code, 0, lookup.stderr);
          assertEquals(JSON.parse(lookup.stdout).access_token, ada.userToken);

          expectExit(await home.run(["logout"], { env }), 0, "logout");
          const gone = await secretTool();
          assertEquals(gone.stdout, "");
        } finally {
          await secrets.stop();
        }
      }, { GATEWAY_API_URL: cloud.url });
    });
  },
});
