/**
 * The systemd unit of deploy/systemd: its command is `deno task start` with the configuration in
 * /etc/gateway, it is hardened, `systemd-analyze verify` accepts it (with the paths of this
 * checkout put in place of /opt/healthcare-gateway), and it starts as written.
 *
 * No systemd runs on the test machines (no `systemctl start`, no `systemd-run`), so the start is
 * the unit's ExecStart= exactly, with its Environment= and WorkingDirectory=, in the file system
 * layout its hardening makes (tests/support/protect_system.ts): everything read-only, the
 * configuration directory and the checkout too, but for the state directory, and a private /tmp,
 * with no capabilities. `User=gateway` is not reproduced (the process stays root, without
 * capabilities), nor the other sandboxing keys.
 */
import { assert, assertEquals } from "./assert.ts";
import {
  freePort,
  protectedCommand,
  protectSystemUnavailable,
  removeDir,
  REPO_ROOT,
  requirePeer,
  runCommand,
  spawnCaptured,
} from "./support/mod.ts";

const UNIT = `${REPO_ROOT}/deploy/systemd/healthcare-gateway.service`;
const DENO = "/opt/healthcare-gateway/node_modules/@deno/linux-x64-glibc/deno";

function settings(text: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const line of text.split("\n")) {
    const m = line.match(/^([A-Za-z]+)=(.*)$/);
    if (m) out.set(m[1], [...(out.get(m[1]) ?? []), m[2]]);
  }
  return out;
}

Deno.test("systemd unit: deno task start's command, hardened, state in /var/lib/gateway", async () => {
  const unit = settings(await Deno.readTextFile(UNIT));
  const exec = unit.get("ExecStart")![0].split(" ");
  assertEquals(exec[0], DENO);
  const task = JSON.parse(await Deno.readTextFile(`${REPO_ROOT}/deno.json`)).tasks.start as string;
  const words = task.split(/\s+/).filter((w) => !/^[A-Z_]+=/.test(w)).slice(1);
  // `deno task start`'s flags, and --cached-only: the unit's DENO_DIR has no npm metadata.
  assertEquals(exec.slice(1, -2), [words[0], "--cached-only", ...words.slice(1)]);
  assertEquals(exec.slice(-2), ["--config", "/etc/gateway/gateway.toml"]);
  for (const env of task.split(/\s+/).filter((w) => /^[A-Z_]+=/.test(w))) {
    assert(unit.get("Environment")!.includes(env), `Environment=${env}`);
  }
  // What the gateway writes goes to the unit's state directory, the one writable path.
  assert(unit.get("Environment")!.includes("GATEWAY_STATE_DIR=/var/lib/gateway"));
  for (
    const [key, value] of [
      ["User", "gateway"],
      ["NoNewPrivileges", "yes"],
      ["ProtectSystem", "strict"],
      ["ProtectHome", "yes"],
      ["PrivateTmp", "yes"],
      ["CapabilityBoundingSet", ""],
      ["StateDirectory", "gateway"],
      ["ReadWritePaths", "/var/lib/gateway"],
      ["KillSignal", "SIGTERM"],
    ]
  ) {
    assertEquals(unit.get(key), [value], key);
  }
  // Longer than the gateway's default grace period, so systemd does not kill a draining gateway.
  assert(Number(unit.get("TimeoutStopSec")![0]) > 10);
});

Deno.test({
  name: "systemd unit: systemd-analyze verify accepts it",
  ignore: !requirePeer("systemd-analyze", "systemd-analyze", "systemd"),
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "gw-unit-" });
    try {
      const deno = Deno.execPath();
      const text = (await Deno.readTextFile(UNIT))
        .replace(DENO, deno)
        .replaceAll("/opt/healthcare-gateway", REPO_ROOT);
      const path = `${dir}/healthcare-gateway.service`;
      await Deno.writeTextFile(path, text);
      const r = await runCommand("systemd-analyze", ["verify", path], { timeoutMs: 60_000 });
      const lines = `${r.stdout}${r.stderr}`.split("\n").filter((l) =>
        l.includes("healthcare-gateway.service")
      );
      assertEquals(lines, [], `${r.stdout}${r.stderr}`);
      assertEquals(r.code, 0);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

const SANDBOX = await protectSystemUnavailable();
if (SANDBOX) console.warn(`skipping the start of the systemd unit: ${SANDBOX}`);

Deno.test({
  name:
    "systemd unit: ExecStart starts with the configuration read-only; state, queues, audit in the state dir",
  ignore: SANDBOX !== undefined,
  fn: async () => {
    // Outside /tmp: the sandbox gives the service a private /tmp, as PrivateTmp= does.
    await Deno.mkdir(`${REPO_ROOT}/.tmp`, { recursive: true });
    const dir = await Deno.makeTempDir({ dir: `${REPO_ROOT}/.tmp`, prefix: "systemd-unit-" });
    const etc = `${dir}/etc/gateway`;
    const state = `${dir}/var/lib/gateway`;
    await Deno.mkdir(etc, { recursive: true });
    await Deno.mkdir(state, { recursive: true });
    const [data, management, nowhere] = [freePort(), freePort(), freePort()];
    // A configuration as a new user writes it: no state paths at all.
    await Deno.writeTextFile(
      `${etc}/gateway.toml`,
      `
[network.main]
bind = "127.0.0.1"
port = ${data}

[management]
port = ${management}

[audit]
file = "audit/audit.jsonl"

[endpoints.echo]
service = "http"
[endpoints.echo.options]
path_prefix = "/echo"

[endpoints.later]
service = "http"
[endpoints.later.options]
path_prefix = "/later"

[backends.echo]
service = "echo"

[backends.archive]
service = "http"
[backends.archive.options]
base_url = "http://127.0.0.1:${nowhere}"
[backends.archive.queue]

[pipelines.echo]
endpoints = ["echo"]
backends = ["echo"]

[pipelines.later]
endpoints = ["later"]
backends = ["archive"]
`,
    );
    // The unit's paths, moved into the test's directories.
    const place = (s: string) =>
      s.replace(DENO, `${REPO_ROOT}/node_modules/@deno/linux-x64-glibc/deno`)
        .replaceAll("/opt/healthcare-gateway", REPO_ROOT)
        .replaceAll("/etc/gateway", etc)
        .replaceAll("/var/lib/gateway", state);
    const unit = settings(await Deno.readTextFile(UNIT));
    const argv = place(unit.get("ExecStart")![0]).split(" ");
    const env: Record<string, string> = {
      // What systemd gives a service of User=gateway (whose home is the state directory).
      PATH: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
      HOME: state,
      STATE_DIRECTORY: state,
      CONFIGURATION_DIRECTORY: etc,
    };
    for (const line of unit.get("Environment")!) {
      const [name, ...value] = place(line).split("=");
      env[name] = value.join("=");
    }
    const sandboxed = protectedCommand([state], argv, [REPO_ROOT]);
    const { promise: started, resolve } = Promise.withResolvers<void>();
    let log = "";
    const gw = spawnCaptured(sandboxed.command, sandboxed.args, {
      cwd: place(unit.get("WorkingDirectory")![0]),
      env,
      clearEnv: true,
      onStderr: (chunk) => {
        log += new TextDecoder().decode(chunk);
        if (log.includes('"msg":"gateway started"')) resolve();
      },
    });
    let checked = false;
    try {
      const exited = gw.child.status.then((s) => {
        throw new Error(`the unit's command exited (${s.code}) before it started\n${gw.output()}`);
      });
      await Promise.race([started, exited]);

      const echo = await fetch(`http://127.0.0.1:${data}/echo/x`);
      assertEquals(echo.status, 200);
      await echo.body?.cancel();
      // The queue accepts for a backend that is down: the message is on disk, in the state dir.
      const queued = await fetch(`http://127.0.0.1:${data}/later/x`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: '{"order":1}',
      });
      assertEquals(queued.status, 202, await queued.text());
      // The management token was generated into the state directory, and it works.
      const token = (await Deno.readTextFile(`${state}/state/management-token`)).trim();
      assertEquals((await Deno.stat(`${state}/state/management-token`)).mode! & 0o777, 0o600);
      const info = await fetch(`http://127.0.0.1:${management}/admin/info`, {
        headers: { authorization: `Bearer ${token}` },
      });
      assertEquals(info.status, 200);
      await info.body?.cancel();
      assert((await Deno.stat(`${state}/audit/audit.jsonl`)).isFile);
      const messages = [];
      for await (const e of Deno.readDir(`${state}/queues/archive`)) messages.push(e.name);
      assert(messages.length > 0, "the queued message is in <state>/queues/archive");
      // Nothing was written beside the configuration.
      const written = [];
      for await (const e of Deno.readDir(etc)) written.push(e.name);
      assertEquals(written, ["gateway.toml"]);
      checked = true;
    } finally {
      const status = await gw.stop();
      await removeDir(dir);
      // SIGTERM drains and exits 0 (asserted only after the checks, whose failure says more).
      if (checked) assertEquals(status.code, 0, gw.output());
    }
  },
});
