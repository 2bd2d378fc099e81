/**
 * The configuration pulled from the cloud service lives in the state directory as `cloud.toml`,
 * next to `cloud-sync.json` (the version and ETag it came with). It is merged into the local
 * configuration like a `pipelines_path` file (endpoints, backends, targets, middleware, pipelines,
 * and networks), only while `[cloud] enabled = true`. The local file keeps everything else
 * (`[cloud]`, `[management]`, `[logging]`, `[proxy]`, `transforms_path`). The file watcher does
 * not watch it: the sync writes it and reloads itself, and puts the previous file back when the
 * reload refuses the new one.
 */
import { dirname, join, resolve } from "node:path";
import { parse, stringify } from "smol-toml";
import type { GatewayConfig } from "../../shared/gateway_config/mod.ts";
import { loadConfigFile, type LoadResult, MANAGED_FILE_SECTIONS } from "../config/mod.ts";
import { readTextIfExists, removeIfExists, writeFileAtomic } from "../../shared/mod.ts";

/** File name of the pulled configuration in the state directory. */
export const MANAGED_CONFIG_NAME = "cloud.toml";
/** File name of the sync state (version and ETag of `cloud.toml`). */
export const SYNC_STATE_NAME = "cloud-sync.json";

/** The version of the pulled configuration that is in `cloud.toml`. */
export interface SyncState {
  version: number;
  etag: string;
  applied_at: string;
}

/** Path of the managed file of a (loaded) configuration with the cloud enabled, else null. */
export function managedConfigPath(config: GatewayConfig, baseDir: string): string | null {
  if (config.cloud.enabled !== true) return null;
  return join(resolve(baseDir, config.cloud.state_dir ?? "state"), MANAGED_CONFIG_NAME);
}

/**
 * Loads the config file and, when it enables the cloud, again with the managed file merged in.
 * The result lists only the local files (what the watcher watches and `/update` uploads).
 */
export async function loadWithManagedConfig(file: string): Promise<LoadResult> {
  const local = await loadConfigFile(file);
  if (!local.config) return local;
  const managed = managedConfigPath(local.config, dirname(resolve(file)));
  if (!managed || (await readTextIfExists(managed)) === undefined) return local;
  return await loadConfigFile(file, { managedFiles: [managed] });
}

/**
 * The managed-file text of a pulled TOML: its mergeable tables only, under a header naming the
 * version. Other keys (`[cloud]`, `transforms_path`) stay the local file's. Throws on bad TOML.
 */
export function managedText(pulledToml: string, version: number, etag: string): string {
  const doc = parse(pulledToml) as Record<string, unknown>;
  const kept: Record<string, unknown> = {};
  for (const section of MANAGED_FILE_SECTIONS) {
    if (doc[section] !== undefined) kept[section] = doc[section];
  }
  const body = stringify(kept).trim();
  return `# Written by the gateway's cloud sync: configuration version ${version} ` +
    `(ETag ${etag}).\n` +
    "# Do not edit: the next change pulled from the cloud service replaces this file.\n" +
    (body ? `\n${body}\n` : "");
}

/** The managed file and sync state of one state directory. */
export class ManagedConfigFiles {
  readonly configPath: string;
  readonly statePath: string;

  constructor(stateDir: string) {
    this.configPath = join(stateDir, MANAGED_CONFIG_NAME);
    this.statePath = join(stateDir, SYNC_STATE_NAME);
  }

  /** The current managed text, or undefined when there is none. */
  async read(): Promise<string | undefined> {
    return await readTextIfExists(this.configPath);
  }

  /** Replaces the managed text (undefined removes the file). */
  async write(text: string | undefined): Promise<void> {
    if (text === undefined) await removeIfExists(this.configPath);
    else await writeFileAtomic(this.configPath, text, { mode: 0o600 });
  }

  /** The recorded sync state, or undefined. */
  async readState(): Promise<SyncState | undefined> {
    const text = await readTextIfExists(this.statePath).catch(() => undefined);
    if (text === undefined) return undefined;
    try {
      const s = JSON.parse(text);
      return typeof s?.version === "number" && typeof s?.etag === "string" ? s : undefined;
    } catch {
      return undefined;
    }
  }

  /** Records the version now in the managed file. */
  async writeState(state: SyncState): Promise<void> {
    await writeFileAtomic(this.statePath, JSON.stringify(state, null, 2) + "\n", { mode: 0o600 });
  }
}
