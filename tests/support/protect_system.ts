/**
 * Running a command the way systemd's `ProtectSystem=strict`, `ReadWritePaths=`, `PrivateTmp=yes`
 * and an empty `CapabilityBoundingSet=` run a service, without a running systemd: in a private
 * mount namespace (`unshare -m`, as root or through `sudo -n`) whose `/` is a read-only bind mount
 * but for the writable directories, with a fresh tmpfs on `/tmp`, and (`setpriv`) with no
 * capabilities and no new privileges. The user stays root: `User=` is not reproduced.
 */
import { runCommand } from "./process.ts";

/** The mount steps, then `exec "$@"`; the writable directories come first, counted by `$1`. */
const SCRIPT = `set -e
n=$1; shift
while [ "$n" -gt 0 ]; do mount --bind "$1" "$1"; shift; n=$((n - 1)); done
mount -o remount,bind,ro /
mount -t tmpfs -o mode=1777 tmpfs /tmp
exec "$@"`;

/** A command line (program and arguments) that runs `argv` in such a sandbox. */
export interface ProtectedCommand {
  command: string;
  args: string[];
}

function prefix(): string[] {
  return Deno.uid() === 0 ? [] : ["sudo", "-n"];
}

/**
 * `argv` in the sandbox, with `writable` (absolute directories outside `/tmp`, which the private
 * tmpfs hides) left writable.
 */
export function protectedCommand(writable: string[], argv: string[]): ProtectedCommand {
  for (const dir of writable) {
    if (dir === "/tmp" || dir.startsWith("/tmp/")) {
      throw new Error(`${dir}: a writable directory under /tmp is hidden by the private /tmp`);
    }
  }
  const line = [
    ...prefix(),
    "unshare",
    "-m",
    "--propagation",
    "private",
    "sh",
    "-c",
    SCRIPT,
    "sh",
    String(writable.length),
    ...writable,
    "setpriv",
    "--no-new-privs",
    "--bounding-set=-all",
    "--inh-caps=-all",
    "--",
    ...argv,
  ];
  return { command: line[0], args: line.slice(1) };
}

/** Why this machine cannot run the sandbox (no root or `sudo -n`, no mount namespaces), or undefined. */
export async function protectSystemUnavailable(): Promise<string | undefined> {
  const probe = protectedCommand([], ["true"]);
  const r = await runCommand(probe.command, probe.args, { timeoutMs: 20_000 })
    .catch((err) => ({ code: -1, stdout: "", stderr: (err as Error).message }));
  return r.code === 0
    ? undefined
    : `cannot make a read-only mount namespace (unshare -m, mount, setpriv): ${r.stderr.trim()}`;
}
