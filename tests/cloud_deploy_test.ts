/**
 * The Deno Deploy entry (cloud/deploy.ts) under `deno serve`: the command of docs/deployment.md
 * run as written, twice on the same data (the key comes from a file, so the second run opens the
 * signing key the first one stored), serving the web UI's htmx script and listening on 127.0.0.1
 * only unless told otherwise; with writes and subprocesses denied it opens the platform's KV
 * (`Deno.openKv()` without a path) and serves the API and the UI; without its settings it answers
 * 503 naming what is missing. Also `cloud serve` (cloud/main.ts): loopback only by default in
 * development mode.
 */
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { TEST_KEY_ENCRYPTION_KEY } from "./cloud_harness.ts";
import {
  freePort,
  removeDir,
  REPO_ROOT,
  runCommand,
  spawnCaptured,
  tempDir,
  waitFor,
} from "./support/mod.ts";
import { defaultHostname } from "../cloud/mod.ts";

type Served = { url: string; process: ReturnType<typeof spawnCaptured> };

/** Waits until `url` answers /healthz (or the process exits). */
async function answering(url: string, process: Served["process"]): Promise<void> {
  await waitFor(async () => {
    try {
      await (await fetch(`${url}/healthz`)).body?.cancel();
      return true;
    } catch {
      if (process.exited()) throw new Error(`deno serve exited\n${process.output()}`);
      return false;
    }
  }, { timeoutMs: 60_000, intervalMs: 200, description: "the deploy entry answering" });
}

/** `deno serve` of the entry with writes and subprocesses denied, reads only of node_modules. */
async function serveDeploy(env: Record<string, string>): Promise<Served> {
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
    "--allow-read=node_modules",
    "--deny-write",
    "--deny-run",
    "--unstable-kv",
    "cloud/deploy.ts",
  ], {
    cwd: REPO_ROOT,
    env: {
      ...env,
      CLOUD_BASE_URL: (env.CLOUD_BASE_URL ?? "").replace("PORT", String(port)),
      DENO_DIR: denoDir,
      NO_COLOR: "1",
      DENO_NO_UPDATE_CHECK: "1",
    },
    afterStop: () => removeDir(denoDir),
  });
  const url = `http://127.0.0.1:${port}`;
  await answering(url, process);
  return { url, process };
}

/** The two lines of docs/deployment.md between the deploy-serve markers, with 8000 -> `port`. */
async function documentedLines(port: number): Promise<[string, string]> {
  const doc = await Deno.readTextFile(`${REPO_ROOT}/docs/deployment.md`);
  const block =
    /<!-- deploy-serve:begin[^\n]*-->\s*```sh\n([\s\S]*?)\n```\s*<!-- deploy-serve:end -->/
      .exec(doc);
  assert(block, "docs/deployment.md has the deploy-serve block");
  const lines = block[1].replaceAll("8000", String(port)).split("\n");
  assertEquals(lines.length, 2, block[1]);
  return [lines[0], lines[1]];
}

/** A documented command line as a process: its VAR=value words, `deno`, and the arguments. */
function commandOf(line: string, home: string): { env: Record<string, string>; args: string[] } {
  const words = line.trim().split(/\s+/).map((w) =>
    w.replaceAll("$HOME", home).replace(/^~(?=\/)/, home)
  );
  const env: Record<string, string> = {};
  while (/^[A-Z_]+=/.test(words[0])) {
    const [name, ...value] = words.shift()!.split("=");
    env[name] = value.join("=");
  }
  assertEquals(words.shift(), "deno", line);
  return { env, args: words };
}

/** A non-loopback IPv4 address of this machine, if it has one. */
function networkAddress(): string | undefined {
  return Deno.networkInterfaces().find((i) => i.family === "IPv4" && !i.address.startsWith("127."))
    ?.address;
}

/** True when a TCP connection to `hostname:port` is accepted. */
async function reachable(hostname: string, port: number): Promise<boolean> {
  try {
    (await Deno.connect({ hostname, port })).close();
    return true;
  } catch {
    return false;
  }
}

Deno.test("deploy entry: the documented deno serve command works twice on the same data, serves htmx, listens on 127.0.0.1", async () => {
  const home = await tempDir("cloud-deploy-home-");
  const denoDir = await tempDir("cloud-deploy-kv-");
  try {
    const port = freePort();
    const [setup, serve] = await documentedLines(port);
    const made = await runCommand("sh", ["-c", setup], { env: { HOME: home } });
    assertEquals(made.code, 0, made.stderr);
    const keyFile = `${home}/.config/gateway-cloud/deploy.key`;
    assertEquals((await Deno.stat(keyFile)).mode! & 0o077, 0, "the key file is private");
    const key = await Deno.readTextFile(keyFile);
    // The setup line again: it keeps the key (a rerun must not make a new one).
    assertEquals((await runCommand("sh", ["-c", setup], { env: { HOME: home } })).code, 0);
    assertEquals(await Deno.readTextFile(keyFile), key);

    const start = async (line = serve) => {
      const { env, args } = commandOf(line, home);
      const process = spawnCaptured(Deno.execPath(), args, {
        cwd: REPO_ROOT,
        env: { ...env, HOME: home, DENO_DIR: denoDir, NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" },
      });
      const url = `http://127.0.0.1:${port}`;
      await answering(url, process);
      return { url, process };
    };
    const kids: string[] = [];
    for (const run of [1, 2]) {
      const { url, process } = await start();
      try {
        const jwks = await (await fetch(`${url}/.well-known/jwks.json`)).json();
        kids.push(jwks.keys.map((k: { kid: string }) => k.kid).join());
        assertEquals(await (await fetch(`${url}/readyz`)).json(), { status: "ready" });
        const htmx = await fetch(`${url}/assets/htmx.min.js`);
        assertEquals(htmx.status, 200, `run ${run}: the htmx script\n${process.output()}`);
        assertMatch(htmx.headers.get("content-type") ?? "", /javascript/);
        assertMatch(await htmx.text(), /htmx/);
        const signUp = await fetch(`${url}/sign-up`);
        assertEquals(signUp.status, 200);
        assertMatch(await signUp.text(), /Create an account|Sign up/);
        const unauthenticated = await fetch(`${url}/api/me`);
        assertEquals(unauthenticated.status, 401);
        await unauthenticated.body?.cancel();
        const address = networkAddress();
        if (address) {
          assertEquals(await reachable(address, port), false, `not served on ${address}`);
        }
        assertMatch(process.output(), new RegExp(`listening on http://127\\.0\\.0\\.1:${port}/`));
        assert(!/PermissionDenied|NotCapable|warning/.test(process.output()), process.output());
      } finally {
        await process.stop();
      }
    }
    assertEquals(kids[1], kids[0], "the second run opened the signing key of the first");

    // Another key on the same data cannot open the stored signing key: 503 naming the cause.
    const otherKey = `${home}/other.key`;
    await Deno.writeTextFile(otherKey, TEST_KEY_ENCRYPTION_KEY);
    const wrong = await start(serve.replaceAll(keyFile.replace(home, "$HOME"), "$HOME/other.key"));
    try {
      const res = await fetch(`${wrong.url}/healthz`);
      assertEquals(res.status, 503);
      assertMatch((await res.json()).error.message, /cannot be decrypted/);
    } finally {
      await wrong.process.stop();
    }

    // Told otherwise (--host 0.0.0.0), it listens everywhere and warns about the loopback base URL.
    const address = networkAddress();
    const open = await start(serve.replace("--host 127.0.0.1", "--host 0.0.0.0"));
    try {
      if (address) assertEquals(await reachable(address, port), true);
      await waitFor(
        () =>
          Promise.resolve(
            /warning: CLOUD_BASE_URL .* --host 127\.0\.0\.1/.test(open.process.output()),
          ),
        {
          timeoutMs: 10_000,
          description: "the warning",
        },
      );
    } finally {
      await open.process.stop();
    }
  } finally {
    await removeDir(home);
    await removeDir(denoDir);
  }
});

Deno.test("deploy entry: with writes and subprocesses denied it serves the API and the UI", async () => {
  const { url, process } = await serveDeploy({
    CLOUD_BASE_URL: "http://127.0.0.1:PORT",
    CLOUD_KEY_ENCRYPTION_KEY: TEST_KEY_ENCRYPTION_KEY,
  });
  try {
    const jwks = await (await fetch(`${url}/.well-known/jwks.json`)).json();
    assertEquals(jwks.keys.length, 1, "a signing key was made and stored in the platform's KV");
    assertEquals(await (await fetch(`${url}/readyz`)).json(), { status: "ready" });
    const signUp = await fetch(`${url}/sign-up`);
    assertEquals(signUp.status, 200);
    assertMatch(await signUp.text(), /Create an account|Sign up/);
    const htmx = await fetch(`${url}/assets/htmx.min.js`);
    assertEquals(htmx.status, 200);
    await htmx.body?.cancel();
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
    const message = (await res.json()).error.message;
    assertMatch(message, /CLOUD_KEY_ENCRYPTION_KEY is required/);
    assertMatch(message, /CLOUD_KEY_ENCRYPTION_KEY_FILE/);
  } finally {
    await process.stop();
  }
});

Deno.test("cloud serve: development mode listens on 127.0.0.1 unless told otherwise", async () => {
  assertEquals(defaultHostname(undefined), "127.0.0.1");
  assertEquals(defaultHostname("http://localhost:8000"), "127.0.0.1");
  assertEquals(defaultHostname("http://127.0.0.2:8000"), "127.0.0.2");
  assertEquals(defaultHostname("http://[::1]:8000"), "::1");
  assertEquals(defaultHostname("https://cloud.example.com"), "0.0.0.0");
  const address = networkAddress();
  const run = async (extra: string[]) => {
    const dir = await tempDir("cloud-bind-");
    const port = freePort();
    const process = spawnCaptured(Deno.execPath(), [
      "run",
      "--node-modules-dir=manual",
      "--allow-net",
      "--allow-read",
      "--allow-write",
      "--allow-env",
      "--unstable-kv",
      "--unstable-no-legacy-abort",
      "cloud/main.ts",
      "--port",
      String(port),
      "--data-dir",
      dir,
      ...extra,
    ], {
      cwd: REPO_ROOT,
      env: { NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1", CLOUD_TEST_PBKDF2_ITERATIONS: "1000" },
      afterStop: () => removeDir(dir),
    });
    await answering(`http://127.0.0.1:${port}`, process);
    return { port, process };
  };
  const dev = await run([]);
  try {
    await waitFor(
      () =>
        Promise.resolve(
          /listening on 127\.0\.0\.1:\d+, this machine only/.test(dev.process.output()),
        ),
      {
        timeoutMs: 10_000,
        description: "the listening line",
      },
    );
    if (address) assertEquals(await reachable(address, dev.port), false);
  } finally {
    await dev.process.stop();
  }
  const told = await run(["--hostname", "0.0.0.0"]);
  try {
    if (address) assertEquals(await reachable(address, told.port), true);
    await waitFor(
      () =>
        Promise.resolve(/listening on 0\.0\.0\.0:\d+, every address/.test(told.process.output())),
      { timeoutMs: 10_000, description: "the listening line" },
    );
  } finally {
    await told.process.stop();
  }
});
