import assert from "node:assert/strict";
import { envOf } from "./env.ts";
import { CliError } from "./errors.ts";
import { Output } from "./output.ts";
import { resolvePaths } from "./paths.ts";
import type { SecretBackend } from "./secret_backend.ts";
import { SecureStore, type StoredCredentials } from "./secure_store.ts";

/** An in-memory keychain; `failWrites` makes it behave like a locked or missing platform store. */
function fakeKeychain(options: { failWrites?: boolean; notKeptElsewhere?: boolean } = {}) {
  const state = { value: null as string | null, opened: 0 };
  const backend: SecretBackend = {
    kind: "keychain",
    description: "OS keychain (fake)",
    read: () => Promise.resolve(state.value),
    write: (v) => {
      if (options.failWrites) return Promise.reject(new Error("AccessDenied"));
      state.value = v;
      return Promise.resolve();
    },
    remove: () => {
      const had = state.value !== null;
      state.value = null;
      return Promise.resolve(had);
    },
    // Like a per-session kernel keyring: this process reads the value back, the next one does not.
    verifyElsewhere: () =>
      options.notKeptElsewhere
        ? Promise.reject(new Error("a second gwcli process does not see the value"))
        : Promise.resolve(),
  };
  return { state, open: () => (state.opened++, Promise.resolve(backend)) };
}

const CREDS: StoredCredentials = {
  access_token: "a.b.c",
  token_type: "Bearer",
  api_url: "https://cloud.example",
  obtained_at: "2026-01-01T00:00:00.000Z",
  source: "device_login",
};

async function setup(
  env: Record<string, string>,
  keychain?: () => Promise<SecretBackend>,
) {
  const home = await Deno.makeTempDir();
  const e = envOf({ HOME: home, ...env });
  const err: string[] = [];
  const out = new Output({ stdout: () => {}, stderr: (t) => err.push(t) });
  out.configure(1, false);
  const paths = resolvePaths(e);
  const store = () =>
    new SecureStore({ paths, env: e, out, apiUrl: "https://cloud.example", keychain });
  return { home, paths, store, err, cleanup: () => Deno.remove(home, { recursive: true }) };
}

const exists = (p: string) => Deno.stat(p).then(() => true, () => false);

Deno.test("secure store (auto): a working keychain holds the token, no file is written", async () => {
  const k = fakeKeychain();
  const t = await setup({}, k.open);
  try {
    assert.equal(await t.store().save(CREDS), "OS keychain (fake)");
    assert.deepEqual(JSON.parse(k.state.value!), CREDS);
    assert.equal(await exists(t.paths.credentials), false);
    assert.deepEqual(await t.store().load(), {
      credentials: CREDS,
      location: "OS keychain (fake)",
    });
    assert.deepEqual(await t.store().clear(), ["OS keychain (fake)"]);
    assert.equal(k.state.value, null);
  } finally {
    await t.cleanup();
  }
});

Deno.test("secure store (auto): falls back to the age file when the keychain fails or cannot load", async () => {
  for (
    const open of [
      fakeKeychain({ failWrites: true }).open,
      () => Promise.reject(new Error("no native module")),
    ]
  ) {
    const t = await setup({}, open);
    try {
      const where = await t.store().save(CREDS);
      assert.match(where, /^age-encrypted file .*credentials\.age$/);
      assert.deepEqual((await t.store().load())?.credentials, CREDS);
      assert.match(
        t.err.join(""),
        /OS keychain (write failed \(AccessDenied\)|unavailable \(no native module\))/,
      );
      assert.deepEqual(await t.store().clear(), [where]);
      assert.equal(await t.store().load(), null);
    } finally {
      await t.cleanup();
    }
  }
});

Deno.test("secure store: a keychain write after a file fallback removes the stale file", async () => {
  const t = await setup({ GWCLI_SECURE_STORE: "file" });
  try {
    await t.store().save(CREDS);
    assert(await exists(t.paths.credentials));
    const k = fakeKeychain();
    const auto = new SecureStore({
      paths: t.paths,
      env: envOf({ HOME: t.home }),
      out: new Output({ stdout: () => {}, stderr: () => {} }),
      apiUrl: "https://cloud.example",
      keychain: k.open,
    });
    assert.equal(
      (await auto.load())?.location.startsWith("age-encrypted file"),
      true,
      "file read in auto mode",
    );
    await auto.save({ ...CREDS, access_token: "x.y.z" });
    assert.equal(await exists(t.paths.credentials), false);
    assert.equal((await auto.load())?.credentials.access_token, "x.y.z");
  } finally {
    await t.cleanup();
  }
});

Deno.test("secure store: file mode never opens the keychain; keychain mode never falls back", async () => {
  const k = fakeKeychain();
  const file = await setup({ GWCLI_SECURE_STORE: "file" }, k.open);
  try {
    await file.store().save(CREDS);
    await file.store().load();
    await file.store().clear();
    assert.equal(k.state.opened, 0);
  } finally {
    await file.cleanup();
  }
  const strict = await setup(
    { GWCLI_SECURE_STORE: "keychain" },
    fakeKeychain({ failWrites: true }).open,
  );
  try {
    await assert.rejects(
      () => strict.store().save(CREDS),
      (e: unknown) => e instanceof CliError && /cannot write to the OS keychain/.test(e.message),
    );
    assert.equal(await exists(strict.paths.credentials), false);
  } finally {
    await strict.cleanup();
  }
  const missing = await setup(
    { GWCLI_SECURE_STORE: "keychain" },
    () => Promise.reject(new Error("gone")),
  );
  try {
    await assert.rejects(() => missing.store().load(), /the OS keychain is unavailable: gone/);
  } finally {
    await missing.cleanup();
  }
});

Deno.test("secure store: a legacy auth.json is migrated once, with the current api-url, and removed", async () => {
  const t = await setup({ GWCLI_SECURE_STORE: "file" });
  try {
    await Deno.mkdir(t.paths.dir, { recursive: true });
    await Deno.writeTextFile(t.paths.legacyAuth, JSON.stringify({ token: "l.e.g" }));
    const loaded = await t.store().load();
    assert.equal(loaded?.credentials.access_token, "l.e.g");
    assert.equal(loaded?.credentials.api_url, "https://cloud.example");
    assert.equal(loaded?.credentials.source, "legacy_auth_json");
    assert.equal(await exists(t.paths.legacyAuth), false);
    assert.match(
      t.err.join(""),
      /note: moved the token of the legacy .*auth\.json to the age-encrypted file/,
    );

    // A stale legacy file next to a stored token is removed, not migrated over it.
    await Deno.writeTextFile(
      t.paths.legacyAuth,
      JSON.stringify({ token: "o.l.d", api_url: "https://x" }),
    );
    assert.equal((await t.store().load())?.credentials.access_token, "l.e.g");
    assert.equal(await exists(t.paths.legacyAuth), false);
    assert.match(t.err.join(""), /removed the legacy .*a token is already in the/);
  } finally {
    await t.cleanup();
  }
});

Deno.test("secure store: stored text that is not gwcli's is an auth error", async () => {
  const k = fakeKeychain();
  k.state.value = "hello";
  const t = await setup({}, k.open);
  try {
    await assert.rejects(() => t.store().load(), /holds no gwcli credentials/);
  } finally {
    await t.cleanup();
  }
});

Deno.test("secure store: a keychain write that a second process cannot read falls back to the age file with a note", async () => {
  const k = fakeKeychain({ notKeptElsewhere: true });
  const t = await setup({}, k.open);
  try {
    const where = await t.store().save(CREDS);
    assert.match(where, /age-encrypted file/);
    assert.equal(k.state.value, null, "the unkept keychain entry is removed");
    assert.ok(await exists(t.paths.credentials));
    assert.match(t.err.join(""), /the OS keychain does not keep the token for later gwcli runs/);
    assert.deepEqual((await t.store().load())?.credentials, CREDS);
  } finally {
    await t.cleanup();
  }
});

Deno.test("secure store (keychain mode): a write a second process cannot read is an error", async () => {
  const k = fakeKeychain({ notKeptElsewhere: true });
  const t = await setup({ GWCLI_SECURE_STORE: "keychain" }, k.open);
  try {
    await assert.rejects(
      () => t.store().save(CREDS),
      (e: unknown) => e instanceof CliError && /second gwcli process/.test(e.message),
    );
    assert.ok(!(await exists(t.paths.credentials)));
  } finally {
    await t.cleanup();
  }
});
