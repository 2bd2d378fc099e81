/**
 * The machine-token state file against the reference `age` tool (Debian `age`): with
 * GATEWAY_ENCRYPTION_KEY the token is written age-encrypted (mode 0600), `age -d` reads it, a
 * file `age` encrypted is read by the gateway, and the token survives a restart; without the key
 * it is lost; a key that is not an age X25519 identity stops the gateway from starting (in the
 * process and as the executable).
 */
import { assert, assertEquals, assertMatch, assertRejects } from "./assert.ts";
import { makeUser, withCloud } from "./cloud_harness.ts";
import {
  ageKey,
  base64,
  machineToken,
  startCloudGateway,
  waitForCloud,
} from "./gateway_cloud_support.ts";
import {
  REPO_ROOT,
  requirePeer,
  runCommand,
  TEST_MANAGEMENT_TOKEN,
  waitFor,
  withManagementToken,
} from "./support/mod.ts";
import { EncryptionKeyError, TOKEN_FILE_NAME } from "../gateway/cloud_client/mod.ts";

const HAS_AGE = requirePeer("age-encrypted token store", "age", "age");

Deno.test({
  name: "encrypted token: `age -d` reads the state file, and the token survives a restart",
  ignore: !HAS_AGE,
  fn: async () => {
    await withCloud(async (cloud) => {
      const u = await makeUser(cloud, "ada@example.com");
      const dir = await Deno.makeTempDir({ prefix: "gw-cloud-age-" });
      const key = await ageKey(dir);
      const env = { GATEWAY_ENCRYPTION_KEY: base64(await Deno.readTextFile(key.file)) };
      const payload = await machineToken(cloud, u, "edge-age");
      const first = await startCloudGateway(cloud, { dir, env });
      const stateFile = `${first.stateDir}/${TOKEN_FILE_NAME}`;
      try {
        const res = await first.admin("POST", "/admin/token", { body: payload });
        assertEquals([res.status, res.json.persisted], [200, true]);
        const info = (await first.info()).cloud;
        assertEquals([info.persisted, info.encryption_key], [true, true]);
        assertEquals(Deno.statSync(stateFile).mode! & 0o777, 0o600);
        const raw = await Deno.readFile(stateFile);
        assertEquals(
          new TextDecoder().decode(raw.subarray(0, 21)),
          "age-encryption.org/v1",
          "the age v1 header",
        );
        assert(!new TextDecoder().decode(raw).includes(payload.machine_token), "not in clear");
        const decrypted = await runCommand("age", ["-d", "-i", key.file, stateFile]);
        assertEquals(decrypted.code, 0, decrypted.stderr);
        assertEquals(JSON.parse(decrypted.stdout), payload);
      } finally {
        await first.stop({ keepDir: true });
      }

      // Restart with the key given as the raw identity this time: the token is back.
      const second = await startCloudGateway(cloud, {
        dir,
        env: { GATEWAY_ENCRYPTION_KEY: key.identity },
      });
      try {
        const c = await waitForCloud(second, (c) => c.verified, "the restored token verified");
        assertEquals([c.authorized, c.token_source, c.persisted, c.gateway_id], [
          true,
          "state_file",
          true,
          payload.gateway_id,
        ]);
      } finally {
        await second.stop({ keepDir: true });
      }

      // Without the key the file is not read: the token is lost, and the log says why.
      const third = await startCloudGateway(cloud, { dir });
      try {
        const c = (await third.info()).cloud;
        assertEquals([c.authorized, c.encryption_key], [false, false]);
        const warned = third.logs.filter((l) =>
          l.includes("GATEWAY_ENCRYPTION_KEY is not set: it is not read")
        );
        assertEquals(warned.length, 1);
      } finally {
        await third.stop();
      }
    });
  },
});

Deno.test({
  name: "encrypted token: a state file written by `age -r` is read by the gateway",
  ignore: !HAS_AGE,
  fn: async () => {
    await withCloud(async (cloud) => {
      const u = await makeUser(cloud, "ada@example.com");
      const dir = await Deno.makeTempDir({ prefix: "gw-cloud-age-" });
      const key = await ageKey(dir);
      const recipient = (await runCommand("age-keygen", ["-y", key.file])).stdout.trim();
      const payload = await machineToken(cloud, u, "edge-age");
      await Deno.mkdir(`${dir}/state`, { recursive: true });
      await Deno.writeTextFile(`${dir}/payload.json`, JSON.stringify(payload));
      const sealed = await runCommand("age", [
        "-r",
        recipient,
        "-o",
        `${dir}/state/${TOKEN_FILE_NAME}`,
        `${dir}/payload.json`,
      ]);
      assertEquals(sealed.code, 0, sealed.stderr);
      const gw = await startCloudGateway(cloud, {
        dir,
        env: { GATEWAY_ENCRYPTION_KEY: base64(key.identity) },
      });
      try {
        const c = await waitForCloud(gw, (c) => c.verified, "the age-written token verified");
        assertEquals([c.token_source, c.gateway_code], ["state_file", "edge-age"]);
      } finally {
        await gw.stop();
      }
    });
  },
});

Deno.test("no encryption key: /token answers persisted false, nothing is written, a restart loses the token", async () => {
  await withCloud(async (cloud) => {
    const u = await makeUser(cloud, "ada@example.com");
    const dir = await Deno.makeTempDir({ prefix: "gw-cloud-nokey-" });
    const first = await startCloudGateway(cloud, { dir });
    try {
      const res = await first.admin("POST", "/admin/token", {
        body: await machineToken(cloud, u, "edge-1"),
      });
      assertEquals([res.status, res.json.persisted], [200, false]);
      await assertRejects(() => Deno.stat(`${first.stateDir}/${TOKEN_FILE_NAME}`));
    } finally {
      await first.stop({ keepDir: true });
    }
    const second = await startCloudGateway(cloud, { dir });
    try {
      assertEquals((await second.info()).cloud.authorized, false);
    } finally {
      await second.stop();
    }
  });
});

Deno.test("a GATEWAY_ENCRYPTION_KEY that is not an age X25519 identity stops the start with a clear message", async () => {
  await withCloud(async (cloud) => {
    for (
      const [value, reason] of [
        ["hunter2hunter2", /base64/],
        [btoa("just some text"), /no AGE-SECRET-KEY-1… identity in it/],
        ["AGE-SECRET-KEY-1QQQQ", /does not decode/],
        [
          "AGE-SECRET-KEY-PQ-1QYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQS8YSTLM",
          /post-quantum/,
        ],
      ] as const
    ) {
      const err = await assertRejects(
        () => startCloudGateway(cloud, { env: { GATEWAY_ENCRYPTION_KEY: value } }),
      );
      assert(err instanceof EncryptionKeyError, String(err));
      assertMatch(err.message, reason, value);
      assertMatch(err.message, /GATEWAY_ENCRYPTION_KEY is not usable: .*age-keygen/);
      assert(!err.message.includes(value), "the value is never echoed");
    }
  });
});

Deno.test({
  name:
    "the executable: GATEWAY_MACHINE_TOKEN and GATEWAY_ENCRYPTION_KEY from the environment; a bad key exits 1",
  ignore: !HAS_AGE,
  fn: async () => {
    await withCloud(async (cloud) => {
      const u = await makeUser(cloud, "ada@example.com");
      const dir = await Deno.makeTempDir({ prefix: "gw-cloud-exe-" });
      const key = await ageKey(dir);
      const payload = await machineToken(cloud, u, "edge-exe");
      const config = `${dir}/gateway.toml`;
      const mgmtPort = (await import("./support/mod.ts")).freePort();
      await Deno.writeTextFile(
        config,
        `[cloud]\nenabled = true\nurl = "${cloud.url}"\n\n[network]\n\n` +
          `[management]\nport = ${mgmtPort}\n`,
      );
      const bad = await runCommand(
        Deno.execPath(),
        [
          "run",
          "--node-modules-dir=manual",
          "--allow-all",
          "--unstable-net",
          "gateway/main.ts",
          "--config",
          config,
        ],
        { cwd: REPO_ROOT, env: { GATEWAY_ENCRYPTION_KEY: "not-a-key", NO_COLOR: "1" } },
      );
      assertEquals(bad.code, 1);
      assertMatch(bad.stderr, /gateway not started: GATEWAY_ENCRYPTION_KEY is not usable/);

      const child = new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "--node-modules-dir=manual",
          "--allow-all",
          "--unstable-net",
          "gateway/main.ts",
          "--config",
          config,
        ],
        cwd: REPO_ROOT,
        env: {
          NO_COLOR: "1",
          GATEWAY_MANAGEMENT_TOKEN: TEST_MANAGEMENT_TOKEN,
          GATEWAY_MACHINE_TOKEN: JSON.stringify(payload),
          GATEWAY_ENCRYPTION_KEY: base64(await Deno.readTextFile(key.file)),
        },
        stdout: "null",
        stderr: "piped",
      }).spawn();
      const stderr = child.stderr.pipeThrough(new TextDecoderStream());
      let output = "";
      const drained = (async () => {
        for await (const chunk of stderr) output += chunk;
      })();
      try {
        let cloudInfo: { token_source?: string; verified?: boolean } | undefined;
        // Up and the token verified (the bound only ends a start that failed).
        await waitFor(async () => {
          try {
            const res = await fetch(
              `http://127.0.0.1:${mgmtPort}/admin/info`,
              withManagementToken(),
            );
            cloudInfo = (await res.json()).cloud;
            return cloudInfo?.verified === true;
          } catch {
            return false; // not up yet
          }
        }, { timeoutMs: 60_000, intervalMs: 200, description: "the token verified" }).catch(
          () => undefined, // the assertions below name what was seen, with the output
        );
        assertEquals(cloudInfo?.token_source, "environment", output);
        assertEquals(cloudInfo?.verified, true, output);
        // The variable's token was written to the state file (beside the config: ./state).
        const decrypted = await runCommand("age", [
          "-d",
          "-i",
          key.file,
          `${dir}/state/${TOKEN_FILE_NAME}`,
        ]);
        assertEquals(JSON.parse(decrypted.stdout), payload);
      } finally {
        child.kill("SIGTERM");
        await child.status;
        await drained;
        await Deno.remove(dir, { recursive: true });
      }
      assert(!output.includes(payload.machine_token), "the token is never logged");
      assertMatch(output, /machine token loaded/);
    });
  },
});
