/**
 * The gateway and its disks: which write failures mean the disk refuses (full, over quota, failing
 * or read-only), and a small-file writer that never leaves a cut file behind. Components turn such
 * a failure into a 507 for the one request that caused it, or into a degraded state of their own
 * (docs/delivery.md, "A full disk"), never into a process exit.
 *
 * @example
 * ```ts
 * import { diskErrorCode, replaceFile } from "./mod.ts";
 *
 * const dir = await Deno.makeTempDir();
 * await replaceFile(`${dir}/note.json`, JSON.stringify({ attempts: 1 }));
 * const full = Object.assign(new Error("No space left on device (os error 28)"), { code: "ENOSPC" });
 * console.log(diskErrorCode(full)); // "ENOSPC"
 * await Deno.remove(dir, { recursive: true });
 * ```
 *
 * @module
 */
export { describeDiskError, type DiskErrorCode, diskErrorCode } from "./errors.ts";
export { replaceFile, type ReplaceFileOptions } from "./replace_file.ts";
