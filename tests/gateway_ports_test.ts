/**
 * The embedded default on other ports (README): `--port` / `--management-port`, and
 * `GATEWAY_PORT` / `GATEWAY_MANAGEMENT_PORT`, with `deno task start`'s flags; a value that is not a
 * port, or a port flag beside `--config`, stops the start with exit 2 and says why.
 */
import { assert, assertEquals, assertMatch } from "./assert.ts";
import {
  freePort,
  REPO_ROOT,
  runCommand,
  spawnCaptured,
  TEST_MANAGEMENT_TOKEN,
  withManagementToken,
} from "./support/mod.ts";

/** `deno task start`'s command after `deno`, without its environment assignments. */
async function startTaskArgs(): Promise<string[]> {
  const deno = JSON.parse(await Deno.readTextFile(`${REPO_ROOT}/deno.json`));
  const words = (deno.tasks.start as string).split(/\s+/).filter((w) => !/^[A-Z_]+=/.test(w));
  assertEquals(words[0], "deno");
  return words.slice(1);
}

/** Runs the embedded default with `args` and `env` until its "gateway started" line. */
async function startDefault(args: string[], env: Record<string, string>) {
  const { promise: started, resolve } = Promise.withResolvers<void>();
  let seen = "";
  const gw = spawnCaptured(Deno.execPath(), [...await startTaskArgs(), ...args], {
    cwd: REPO_ROOT,
    env: { GATEWAY_MANAGEMENT_TOKEN: TEST_MANAGEMENT_TOKEN, ...env },
    onStderr: (chunk) => {
      seen += new TextDecoder().decode(chunk);
      if (seen.includes('"msg":"gateway started"')) resolve();
    },
  });
  const exited = gw.child.status.then((s) => {
    throw new Error(`the gateway exited (${s.code}) before it started\n${gw.output()}`);
  });
  await Promise.race([started, exited]);
  return gw;
}

async function checkPorts(data: number, management: number): Promise<void> {
  const echo = await fetch(`http://127.0.0.1:${data}/echo/x?a=1`);
  assertEquals(echo.status, 200);
  assertEquals((await echo.json()).path, "/x");
  const info = await fetch(`http://127.0.0.1:${management}/admin/info`, withManagementToken());
  assertEquals(info.status, 200);
  assertEquals((await info.json()).config_file, null);
}

Deno.test("deno task start --port P --management-port M: the embedded default on P and M", async () => {
  const [data, management] = [freePort(), freePort()];
  const gw = await startDefault(["--port", String(data), "--management-port", String(management)], {
    // The flags win over the variables.
    GATEWAY_PORT: "1",
    GATEWAY_MANAGEMENT_PORT: "2",
  });
  try {
    await checkPorts(data, management);
  } finally {
    assertEquals((await gw.stop()).code, 0, gw.output());
  }
});

Deno.test("GATEWAY_PORT and GATEWAY_MANAGEMENT_PORT: the same without flags", async () => {
  const [data, management] = [freePort(), freePort()];
  const gw = await startDefault([], {
    GATEWAY_PORT: String(data),
    GATEWAY_MANAGEMENT_PORT: String(management),
  });
  try {
    await checkPorts(data, management);
  } finally {
    assertEquals((await gw.stop()).code, 0, gw.output());
  }
});

Deno.test("--port: not a port, or beside --config, is exit 2 with the reason", async () => {
  const args = await startTaskArgs();
  const bad = await runCommand(Deno.execPath(), [...args, "--port", "80a"], { cwd: REPO_ROOT });
  assertEquals(bad.code, 2);
  assertMatch(bad.stderr, /^--port: expected a TCP port \(1-65535\), found "80a"/);
  const env = await runCommand(Deno.execPath(), args, {
    cwd: REPO_ROOT,
    env: { GATEWAY_MANAGEMENT_PORT: "99999" },
  });
  assertEquals(env.code, 2);
  assertMatch(env.stderr, /^GATEWAY_MANAGEMENT_PORT: expected a TCP port/);
  const withConfig = await runCommand(Deno.execPath(), [
    ...args,
    "--config",
    "fixtures/configs/full.toml",
    "--port",
    "8081",
  ], { cwd: REPO_ROOT });
  assertEquals(withConfig.code, 2);
  assertMatch(withConfig.stderr, /^--port applies to the embedded default only/);
  assert(!withConfig.stderr.includes("gateway started"));
});
