/**
 * Removal of the temporary files that an interrupted write leaves behind (a killed process, a
 * power cut): the local store's `.<name>.<id>.tmp` and `.<name>.meta.json.<id>.tmp`, and the DICOM
 * receiver's `.<SOP instance UID>.<uuid>.tmp`. No request path can address them (segments that
 * start with `.` are refused), so without this they would only fill the disk.
 *
 * Each directory tree is swept once per process, in the background, when the first configuration
 * that uses it is built. Only files last modified before this process started are removed: a write
 * of this process is never touched, nor one that another gateway sharing the root is making now.
 */

/** Our temporary names: hidden, an 8-hex-digit or UUID suffix, `.tmp`. */
const TEMPORARY_NAME =
  /^\..+\.(?:[0-9a-f]{8}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.tmp$/;

/** True for a name that one of our atomic writes uses for its temporary file. */
export function isTemporaryName(name: string): boolean {
  return TEMPORARY_NAME.test(name);
}

/** The time this process started, in ms since the epoch. */
const PROCESS_START_MS = performance.timeOrigin;

/** Trees already swept (or being swept) by this process. */
const swept = new Map<string, Promise<number>>();

/** Options of {@link sweepStaleTemporaries}. */
export interface SweepOptions {
  /** Files modified at or after this time are kept (default: when this process started). */
  olderThanMs?: number;
}

/**
 * Removes stale temporary files under `root` (recursively, not following symbolic links);
 * resolves with how many were removed. A missing root counts as empty.
 */
export async function sweepStaleTemporaries(
  root: string,
  options: SweepOptions = {},
): Promise<number> {
  const olderThan = options.olderThanMs ?? PROCESS_START_MS;
  let removed = 0;
  const pending = [root];
  while (pending.length > 0) {
    const dir = pending.pop()!;
    let entries: Deno.DirEntry[];
    try {
      entries = await Array.fromAsync(Deno.readDir(dir));
    } catch (err) {
      if (err instanceof Deno.errors.NotFound || err instanceof Deno.errors.NotADirectory) continue;
      throw err;
    }
    for (const entry of entries) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory) {
        pending.push(path);
      } else if (entry.isFile && isTemporaryName(entry.name)) {
        try {
          const mtime = (await Deno.lstat(path)).mtime?.getTime() ?? 0;
          if (mtime >= olderThan) continue;
          await Deno.remove(path);
          removed++;
        } catch (err) {
          if (!(err instanceof Deno.errors.NotFound)) throw err;
        }
      }
    }
  }
  return removed;
}

/** A logger's part that the sweep reports to. */
interface SweepLogger {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
}

/**
 * Starts {@link sweepStaleTemporaries} for `root` unless this process already did; the outcome
 * is logged (info when files were removed, warn on failure). Never rejects.
 */
export function sweepOnce(root: string, logger: SweepLogger): Promise<number> {
  let sweep = swept.get(root);
  if (!sweep) {
    sweep = sweepStaleTemporaries(root).then(
      (count) => {
        if (count > 0) {
          logger.info("removed temporary files left by interrupted writes", { root, count });
        }
        return count;
      },
      (err) => {
        logger.warn("could not sweep temporary files", { root, error: (err as Error).message });
        return 0;
      },
    );
    swept.set(root, sweep);
  }
  return sweep;
}
