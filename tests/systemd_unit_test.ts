/**
 * The systemd unit of deploy/systemd: its command is `deno task start` with the configuration in
 * /etc/gateway, it is hardened, and `systemd-analyze verify` accepts it (with the paths of this
 * checkout put in place of /opt/healthcare-gateway).
 */
import { assert, assertEquals } from "./assert.ts";
import { REPO_ROOT, requirePeer, runCommand } from "./support/mod.ts";

const UNIT = `${REPO_ROOT}/deploy/systemd/healthcare-gateway.service`;

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
  assertEquals(exec[0], "/opt/healthcare-gateway/node_modules/@deno/linux-x64-glibc/deno");
  const task = JSON.parse(await Deno.readTextFile(`${REPO_ROOT}/deno.json`)).tasks.start as string;
  const words = task.split(/\s+/);
  assertEquals(exec.slice(1, -2), words.filter((w) => !/^[A-Z_]+=/.test(w)).slice(1));
  assertEquals(exec.slice(-2), ["--config", "/etc/gateway/gateway.toml"]);
  for (const env of words.filter((w) => /^[A-Z_]+=/.test(w))) {
    assert(unit.get("Environment")!.includes(env), `Environment=${env}`);
  }
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
        .replace("/opt/healthcare-gateway/node_modules/@deno/linux-x64-glibc/deno", deno)
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
