/**
 * A size-limited filesystem for tests of a full disk: a tmpfs mounted on a temporary directory
 * (as root, or with `sudo -n`). Hosts that cannot mount say so in `reason`.
 */
import { runCommand } from "./process.ts";

/** A mounted tmpfs; `unmount()` unmounts it and removes the directory. */
export interface SmallFilesystem {
  dir: string;
  unmount(): Promise<void>;
}

/** Mounts a tmpfs of `sizeKiB` KiB, or explains why it cannot. */
export async function mountSmallFilesystem(
  sizeKiB: number,
): Promise<SmallFilesystem | { reason: string }> {
  const dir = await Deno.makeTempDir({ prefix: "gw-small-fs-" });
  const root = Deno.uid() === 0;
  const run = (args: string[]) =>
    root ? runCommand(args[0], args.slice(1)) : runCommand("sudo", ["-n", ...args]);
  const mounted = await run([
    "mount",
    "-t",
    "tmpfs",
    "-o",
    `size=${sizeKiB}k,mode=0700`,
    "tmpfs",
    dir,
  ])
    .catch((err) => ({ code: 1, stdout: "", stderr: (err as Error).message }));
  if (mounted.code !== 0) {
    await Deno.remove(dir).catch(() => {});
    return { reason: `cannot mount a tmpfs: ${mounted.stderr.trim()}` };
  }
  return {
    dir,
    unmount: async () => {
      await run(["umount", dir]);
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}
