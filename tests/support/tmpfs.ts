/**
 * A size-limited filesystem for tests of a full disk: a tmpfs mounted on a temporary directory
 * (as root, or with `sudo -n`). Hosts that cannot mount say so in `reason`. `fillFilesystem`
 * uses up its space (or its inodes) until it refuses writes, and gives it back on demand;
 * `readOnly` turns it read-only, as a file system remounted after I/O errors is.
 */
import { runCommand } from "./process.ts";

/** A mounted tmpfs; `unmount()` unmounts it and removes the directory. */
export interface SmallFilesystem {
  dir: string;
  /** Remounts it read-only (writes fail with EROFS) or, with `false`, writable again. */
  readOnly(on: boolean): Promise<void>;
  unmount(): Promise<void>;
}

/** Options of {@link mountSmallFilesystem}. */
export interface SmallFilesystemOptions {
  /** Most files and directories it holds (tmpfs `nr_inodes`); default: the kernel's. */
  inodes?: number;
}

/** Mounts a tmpfs of `sizeKiB` KiB, or explains why it cannot. */
export async function mountSmallFilesystem(
  sizeKiB: number,
  options: SmallFilesystemOptions = {},
): Promise<SmallFilesystem | { reason: string }> {
  const dir = await Deno.makeTempDir({ prefix: "gw-small-fs-" });
  const root = Deno.uid() === 0;
  const run = (args: string[]) =>
    root ? runCommand(args[0], args.slice(1)) : runCommand("sudo", ["-n", ...args]);
  const inodes = options.inodes ? `,nr_inodes=${options.inodes}` : "";
  const mounted = await run([
    "mount",
    "-t",
    "tmpfs",
    "-o",
    `size=${sizeKiB}k,mode=0700${inodes}`,
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
    readOnly: async (on) => {
      const r = await run(["mount", "-o", `remount,${on ? "ro" : "rw"}`, dir]);
      if (r.code !== 0) throw new Error(`cannot remount ${dir}: ${r.stderr.trim()}`);
    },
    unmount: async () => {
      await run(["umount", dir]);
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}

/** What {@link fillFilesystem} took; `free()` gives it back. */
export interface Filler {
  free(): Promise<void>;
}

/**
 * Fills the filesystem of `dir` until it answers ENOSPC: its space (one growing file: then no
 * file can take a byte), or its inodes (empty files: then no file or directory can be created).
 */
export async function fillFilesystem(
  dir: string,
  what: "space" | "inodes" = "space",
): Promise<Filler> {
  const folder = await Deno.makeTempDir({ dir, prefix: ".filler-" });
  const full = (err: unknown) => (err as { code?: string })?.code === "ENOSPC";
  if (what === "space") {
    const file = await Deno.open(`${folder}/space`, { write: true, createNew: true });
    const chunk = new Uint8Array(64 * 1024);
    try {
      for (;;) await file.write(chunk);
    } catch (err) {
      if (!full(err)) throw err;
    } finally {
      file.close();
    }
  } else {
    for (let i = 0;; i++) {
      try {
        await Deno.writeFile(`${folder}/${i}`, new Uint8Array(0), { createNew: true });
      } catch (err) {
        if (!full(err)) throw err;
        break;
      }
    }
  }
  return { free: () => Deno.remove(folder, { recursive: true }) };
}
