/**
 * The Deno Deploy entry (cloud/deploy.ts) under `deno serve` with the file system and
 * subprocesses denied: it opens the platform's KV (`Deno.openKv()` without a path), reads its
 * settings from the environment, and serves the API and the UI; without its settings it answers
 * 503 naming what is missing instead of crashing.
 */
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { TEST_KEY_ENCRYPTION_KEY } from "./cloud_harness.ts";
import { freePort, removeDir, REPO_ROOT, spawnCaptured, tempDir, waitFor } from "./support/mod.ts";

/** `deno serve` of the entry with read, write and run denied. */
async function serveDeploy(env: Record<string, string>) {
  const port = freePort();
  // A fresh DENO_DIR: the platform's KV of `deno serve` lives there, one per test run.
  const denoDir = await tempDir("cloud-deploy-");
  const process = spawnCaptured(Deno.execPath(), [
    "serve",
    "--host",
    "127.0.0.1",
    "--port",
    String(port),
    "--allow-net",
    "--allow-env",
    "--deny-read",
    "--deny-write",
    "--deny-run",
    "--unstable-kv",
    "cloud/deploy.ts",
  ], {
    cwd: REPO_ROOT,
    env: { ...env, DENO_DIR: denoDir, NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" },
    afterStop: () => removeDir(denoDir),
  });
  const url = `http://127.0.0.1:${port}`;
  await waitFor(async () => {
    try {
      await (await fetch(`${url}/healthz`)).body?.cancel();
      return true;
    } catch {
      if (process.exited()) throw new Error(`deno serve exited\n${process.output()}`);
      return false;
    }
  }, { timeoutMs: 60_000, intervalMs: 200, description: "the deploy entry answering" });
  return { url, process };
}

Deno.test("deploy entry: serves the API and the UI with the file system and subprocesses denied", async () => {
  const port = freePort();
  const { url, process } = await (async () => {
    const started = await serveDeploy({
      CLOUD_BASE_URL: `http://127.0.0.1:${port}`,
      CLOUD_KEY_ENCRYPTION_KEY: TEST_KEY_ENCRYPTION_KEY,
    });
    return started;
  })();
  try {
    const jwks = await (await fetch(`${url}/.well-known/jwks.json`)).json();
    assertEquals(jwks.keys.length, 1, "a signing key was made and stored in the platform's KV");
    assertEquals(await (await fetch(`${url}/readyz`)).json(), { status: "ready" });
    const signUp = await fetch(`${url}/sign-up`);
    assertEquals(signUp.status, 200);
    assertMatch(await signUp.text(), /Create an account|Sign up/);
    const unauthenticated = await fetch(`${url}/api/me`);
    assertEquals(unauthenticated.status, 401);
    await unauthenticated.body?.cancel();
    assert(!/PermissionDenied|NotCapable/.test(process.output()), process.output());
  } finally {
    await process.stop();
  }
});

Deno.test("deploy entry: without its settings it answers 503 naming what is missing", async () => {
  const { url, process } = await serveDeploy({ CLOUD_BASE_URL: "https://cloud.example.com" });
  try {
    const res = await fetch(`${url}/healthz`);
    assertEquals(res.status, 503);
    assertMatch((await res.json()).error.message, /CLOUD_KEY_ENCRYPTION_KEY is required/);
  } finally {
    await process.stop();
  }
});
