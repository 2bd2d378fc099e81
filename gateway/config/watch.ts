/**
 * Watching config files for changes. Editors often save by writing a new file and renaming it
 * over the old one, which ends a watch on the file itself; so the parent directories are watched
 * and events are filtered by name.
 */
import { basename, dirname, join, resolve } from "node:path";
import { type Clock, systemClock, type TimerHandle } from "../../shared/mod.ts";

/** A running watch; close it to stop. */
export interface ConfigWatcher {
  close(): void;
}

/** Quiet time after the last event before `onChange` runs (editors write in bursts). */
export const WATCH_DEBOUNCE_MS = 100;

/** Test hooks of {@link watchConfig}; the gateway passes none. */
export interface WatchHooks {
  /** Times the debounce (default: the system clock); a test moves a `ManualClock` instead. */
  clock?: Clock;
  /**
   * Called with the paths of every file-system event once it has been handled (relevant or
   * not, the debounce set or left), in the order they arrive: a test writes a marker file and
   * waits for its event to know every earlier one was seen.
   */
  onEvent?: (paths: string[]) => void;
}

/**
 * Calls `onChange` (debounced) when one of `files` or any `*.toml` directly in one of `dirs`
 * is created, changed, renamed or removed. Paths that do not exist yet are skipped.
 */
export function watchConfig(
  files: string[],
  dirs: string[],
  onChange: () => void,
  debounceMs = WATCH_DEBOUNCE_MS,
  hooks: WatchHooks = {},
): ConfigWatcher {
  const clock = hooks.clock ?? systemClock;
  const wantedFiles = new Set<string>();
  const wantedDirs = new Set<string>();
  const watchDirs = new Set<string>();
  for (const file of files) {
    const dir = realDir(dirname(resolve(file)));
    wantedFiles.add(join(dir, basename(file)));
    watchDirs.add(dir);
  }
  for (const d of dirs) {
    const dir = realDir(resolve(d));
    wantedDirs.add(dir);
    watchDirs.add(dir);
  }
  const existing = [...watchDirs].filter(isDirectory);
  if (existing.length === 0) return { close() {} };

  const relevant = (path: string) => {
    const p = resolve(path);
    return wantedFiles.has(p) || (p.endsWith(".toml") && wantedDirs.has(dirname(p)));
  };
  const watcher = Deno.watchFs(existing, { recursive: false });
  let timer: TimerHandle | undefined;
  let closed = false;
  (async () => {
    try {
      for await (const event of watcher) {
        if (closed) break; // events already queued when it was closed
        if (event.kind !== "access" && event.paths.some(relevant)) {
          if (timer !== undefined) clock.clearTimeout(timer);
          timer = clock.setTimeout(() => {
            timer = undefined;
            if (!closed) onChange();
          }, debounceMs);
        }
        hooks.onEvent?.(event.paths);
      }
    } catch {
      // The watcher was closed or its directory vanished: nothing more to report.
    }
  })();
  return {
    close() {
      if (closed) return;
      closed = true;
      if (timer !== undefined) clock.clearTimeout(timer);
      timer = undefined;
      watcher.close();
    },
  };
}

/** The real path of `dir` (events report real paths, e.g. /private/tmp on macOS). */
function realDir(dir: string): string {
  try {
    return Deno.realPathSync(dir);
  } catch {
    return dir;
  }
}

function isDirectory(path: string): boolean {
  try {
    return Deno.statSync(path).isDirectory;
  } catch {
    return false;
  }
}
