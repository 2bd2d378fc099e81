/**
 * The exclusive lock of a gateway's state directory, so that two gateway processes never share
 * what must have one writer: the audit trail's chain, the delivery queues, the cloud state, the
 * generated management token. It is the OS's advisory file lock on `<state_dir>/.lock` (flock on
 * Linux and macOS, LockFileEx on Windows) taken with `Deno.FsFile.tryLock`, which never waits;
 * the OS releases it when the process ends, however it ends (a `kill -9` leaves no stale lock).
 * The file holds the owner's process id, which the message of a refused gateway names.
 */
import { join, resolve } from "node:path";
import type { GatewayConfig } from "../../shared/gateway_config/mod.ts";
import { MANAGEMENT_TOKEN_ENV } from "../management/mod.ts";

/** Name of the lock file in the state directory. */
export const STATE_LOCK_FILE = ".lock";

/** The state directory of `config`, absolute (relative paths resolve against `baseDir`). */
export function stateDirOf(config: GatewayConfig, baseDir: string): string {
  return resolve(baseDir, config.cloud.state_dir ?? "state");
}

/**
 * True when `config` keeps something that must have one writer, which the state directory's lock
 * guards: the cloud state, a generated management token, an audit file or a delivery queue. A
 * gateway without any of them (an embedded one, say) shares nothing and takes no lock.
 */
export function needsStateLock(
  config: GatewayConfig,
  env: (name: string) => string | undefined,
): boolean {
  const m = config.management;
  const generatedToken = m.enabled && !m.token_file && !env(MANAGEMENT_TOKEN_ENV)?.trim();
  return config.cloud.enabled === true || generatedToken || config.audit?.file !== undefined ||
    Object.values(config.backends).some((b) => b.queue !== undefined);
}

/** Another process holds the state directory's lock. */
export class StateDirLocked extends Error {
  /** The state directory. */
  readonly dir: string;
  /** The process that holds it, when its lock file says. */
  readonly pid: number | undefined;

  /** The one-line refusal naming `dir` and, when known, the `pid` that holds it. */
  constructor(dir: string, pid: number | undefined) {
    super(
      `the state directory ${dir} is in use by another gateway` +
        (pid === undefined ? "" : ` (pid ${pid})`) +
        "; stop it, or give this one its own [cloud] state_dir",
    );
    this.name = "StateDirLocked";
    this.dir = dir;
    this.pid = pid;
  }
}

/** The lock of one state directory, held by this process until released (or the process ends). */
export class StateLock {
  /** The locked directory (absolute). */
  readonly dir: string;
  readonly #file: Deno.FsFile;

  private constructor(dir: string, file: Deno.FsFile) {
    this.dir = dir;
    this.#file = file;
  }

  /**
   * Locks `dir` (created if missing, 0700) or throws StateDirLocked at once; nothing in it is
   * written unless the lock is taken.
   */
  static async acquire(dir: string): Promise<StateLock> {
    await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
    const path = join(dir, STATE_LOCK_FILE);
    const file = await Deno.open(path, { read: true, write: true, create: true, mode: 0o600 });
    let locked: boolean;
    try {
      locked = await file.tryLock(true);
    } catch (err) {
      file.close();
      throw new Error(`cannot lock the state directory ${dir}: ${(err as Error).message}`, {
        cause: err,
      });
    }
    if (!locked) {
      file.close();
      throw new StateDirLocked(dir, await ownerOf(path));
    }
    try {
      await file.truncate(0);
      const bytes = new TextEncoder().encode(`${Deno.pid}\n`);
      for (let written = 0; written < bytes.length;) {
        written += await file.write(bytes.subarray(written));
      }
    } catch {
      // The pid only names the owner in another gateway's message; the lock is what counts.
    }
    return new StateLock(dir, file);
  }

  /** Lets the lock go (closing the file releases it). */
  release(): void {
    try {
      this.#file.close();
    } catch {
      // released already
    }
  }
}

/** The process id written in the lock file at `path`, if it can be read. */
async function ownerOf(path: string): Promise<number | undefined> {
  const text = await Deno.readTextFile(path).catch(() => "");
  const pid = Number(text.trim());
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}
