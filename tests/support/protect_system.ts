/**
 * Running a command the way systemd's `ProtectSystem=strict`, `ReadWritePaths=`, `PrivateTmp=yes`
 * and an empty `CapabilityBoundingSet=` run a service, without a running systemd: in a private
 * mount namespace (`unshare -m`, as root or through `sudo -n`) whose `/` is a read-only bind mount
 * but for the writable directories, with a fresh tmpfs on `/tmp`, and (`setpriv`) with no
 * capabilities and no new privileges. The user stays root: `User=` is not reproduced.
 */
import { runCommand } from "./process.ts";

/**
 * The mount steps, then `exec "$@"`: `$1` says whether /tmp gets a private tmpfs, then the
 * writable directories, counted by `$2`.
 */
const SCRIPT = `set -e
private_tmp=$1; shift
n=$1; shift
while [ "$n" -gt 0 ]; do mount --bind "$1" "$1"; shift; n=$((n - 1)); done
mount -o remount,bind,ro /
if [ "$private_tmp" = 1 ]; then mount -t tmpfs -o mode=1777 tmpfs /tmp; fi
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
 * `argv` in the sandbox, with `writable` (absolute directories) left writable. `visible` names
 * directories the command reads (the checkout): when one of them, or a writable one, lies under
 * `/tmp` (a checkout cloned there), /tmp keeps its files, read-only, instead of a private tmpfs
 * that would hide them (`privateTmp` says which).
 */
export function protectedCommand(
  writable: string[],
  argv: string[],
  visible: string[] = [],
): ProtectedCommand & { privateTmp: boolean } {
  const underTmp = (dir: string) => dir === "/tmp" || dir.startsWith("/tmp/");
  const privateTmp = ![...writable, ...visible].some(underTmp);
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
    privateTmp ? "1" : "0",
    String(writable.length),
    ...writable,
    "setpriv",
    "--no-new-privs",
    "--bounding-set=-all",
    "--inh-caps=-all",
    "--",
    ...argv,
  ];
  return { command: line[0], args: line.slice(1), privateTmp };
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
