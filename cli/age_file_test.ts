import assert from "node:assert/strict";
import { Decrypter, generateX25519Identity } from "age-encryption";
import { findSecretKey, identityFromEnv, openAgeFile } from "./age_file.ts";
import { envOf } from "./env.ts";
import { CliError, EXIT } from "./errors.ts";

async function withDir(fn: (dir: string) => Promise<void>) {
  const dir = await Deno.makeTempDir();
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("age file: round trip with an identity file created 0600 on first write, reused after", async () => {
  await withDir(async (dir) => {
    const warnings: string[] = [];
    const opts = {
      file: `${dir}/credentials.age`,
      identityFile: `${dir}/identity.txt`,
      env: envOf({}),
      warn: (t: string) => warnings.push(t),
    };
    const store = openAgeFile(opts);
    assert.equal(await store.read(), null);
    await store.write("secret one");
    const identity = await Deno.readTextFile(opts.identityFile);
    if (Deno.build.os !== "windows") {
      assert.equal((await Deno.stat(opts.identityFile)).mode! & 0o777, 0o600);
      assert.equal((await Deno.stat(opts.file)).mode! & 0o777, 0o600);
    }
    assert.equal(await openAgeFile(opts).read(), "secret one");
    await store.write("secret two");
    assert.equal(await Deno.readTextFile(opts.identityFile), identity, "the identity is kept");
    const d = new Decrypter();
    d.addIdentity(findSecretKey(identity)!);
    assert.equal(
      new TextDecoder().decode(await d.decrypt(await Deno.readFile(opts.file))),
      "secret two",
    );
    if (Deno.build.os !== "windows") {
      await Deno.chmod(opts.identityFile, 0o644);
      await store.read();
      assert.match(warnings.join("\n"), /identity\.txt is readable by other users/);
    }
    assert.equal(await store.remove(), true);
    assert.equal(await store.remove(), false);
    assert.equal(await store.read(), null);
  });
});

Deno.test("age file: concurrent first writes agree on one identity", async () => {
  await withDir(async (dir) => {
    const stores = Array.from(
      { length: 4 },
      (_, i) =>
        openAgeFile({
          file: `${dir}/c${i}.age`,
          identityFile: `${dir}/identity.txt`,
          env: envOf({}),
        }),
    );
    await Promise.all(stores.map((s, i) => s.write(`v${i}`)));
    for (const [i, s] of stores.entries()) assert.equal(await s.read(), `v${i}`);
    assert.deepEqual(
      [...Deno.readDirSync(dir)].map((e) => e.name).filter((n) => n.includes("tmp")),
      [],
      "no temporary files left",
    );
  });
});

Deno.test("age file: GWCLI_ENCRYPTION_KEY, bare or base64; a wrong or missing key is an auth error", async () => {
  await withDir(async (dir) => {
    const key = await generateX25519Identity();
    const other = await generateX25519Identity();
    const at = (env: Record<string, string>) =>
      openAgeFile({ file: `${dir}/c.age`, identityFile: `${dir}/identity.txt`, env: envOf(env) });
    await at({ GWCLI_ENCRYPTION_KEY: key }).write("s");
    await assert.rejects(() => Deno.stat(`${dir}/identity.txt`), Deno.errors.NotFound);
    assert.equal(await at({ GWCLI_ENCRYPTION_KEY: btoa(`# comment\n${key}\n`) }).read(), "s");
    assert.equal(await at({ GWCLI_ENCRYPTION_KEY: key.toLowerCase() }).read(), "s");
    const authFailure = (pattern: RegExp) => (e: unknown) =>
      e instanceof CliError && e.exitCode === EXIT.auth && pattern.test(e.message);
    await assert.rejects(
      () => at({ GWCLI_ENCRYPTION_KEY: other }).read(),
      authFailure(/with the identity from GWCLI_ENCRYPTION_KEY/),
    );
    await assert.rejects(() => at({}).read(), authFailure(/identity\.txt is missing/));
    assert.throws(
      () => identityFromEnv(envOf({ GWCLI_ENCRYPTION_KEY: "nope" })),
      /not an age identity/,
    );
    assert.equal(identityFromEnv(envOf({})), undefined);
    assert.equal(findSecretKey("# x\n\nAGE-SECRET-KEY-1ABC\n"), "AGE-SECRET-KEY-1ABC");
    assert.equal(findSecretKey("age1public"), undefined);
  });
});
