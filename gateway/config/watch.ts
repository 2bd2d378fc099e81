/**
 * Watching config files for changes. Editors often save by writing a new file and renaming it
 * over the old one, which ends a watch on the file itself; so the parent directories are watched
 * and events are filtered by name.
 */
import { basename, dirname, join, resolve } from "node:path";

/** A running watch; close it to stop. */
export interface ConfigWatcher {
  close(): void;
}

/** Quiet time after the last event before `onChange` runs (editors write in bursts). */
export const WATCH_DEBOUNCE_MS = 100;

/**
 * Calls `onChange` (debounced) when one of `files` or any `*.toml` directly in one of `dirs`
 * is created, changed, renamed or removed. Paths that do not exist yet are skipped.
 */
export function watchConfig(
  files: string[],
  dirs: string[],
  onChange: () => void,
  debounceMs = WATCH_DEBOUNCE_MS,
): ConfigWatcher {
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
  let timer: ReturnType<typeof setTimeout> | undefined;
  let closed = false;
  (async () => {
    try {
      for await (const event of watcher) {
        if (event.kind === "access" || !event.paths.some(relevant)) continue;
        clearTimeout(timer);
        timer = setTimeout(() => {
          timer = undefined;
          if (!closed) onChange();
        }, debounceMs);
      }
    } catch {
      // The watcher was closed or its directory vanished: nothing more to report.
    }
  })();
  return {
    close() {
      if (closed) return;
      closed = true;
      clearTimeout(timer);
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
