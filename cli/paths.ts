/** Where gwcli keeps its local data: `~/.gwcli/` unless `GWCLI_HOME` names another directory. */
import { CliError } from "./errors.ts";
import type { Env } from "./env.ts";

/** Environment variable that overrides the data directory (tests, several profiles). */
export const HOME_ENV = "GWCLI_HOME";

/** The files of gwcli's data directory. */
export interface GwcliPaths {
  /** The directory itself (created 0700 on first write). */
  dir: string;
  /** `config.json`: the only key is `api-url`. */
  config: string;
  /** `instances.json`: the registry of gateway instances. */
  instances: string;
  /** `credentials.age`: the user token, age-encrypted (when the OS keychain is unavailable). */
  credentials: string;
  /** `identity.txt`: the age identity of `credentials.age` (unless `GWCLI_ENCRYPTION_KEY` is set). */
  identity: string;
  /** `auth.json`: the legacy plain-text token file, migrated on first use and removed. */
  legacyAuth: string;
}

/** The user's home directory: `HOME`, else `USERPROFILE` (Windows). */
export function homeDirectory(env: Env): string {
  const home = env("HOME") || env("USERPROFILE");
  if (!home) {
    throw new CliError("cannot find the home directory: set HOME (or GWCLI_HOME)");
  }
  return home;
}

/** Joins path parts with the separator of `base` (`\` when it has one and no `/`). */
export function joinPath(base: string, ...parts: string[]): string {
  const sep = base.includes("\\") && !base.includes("/") ? "\\" : "/";
  return [base.replace(/[\\/]+$/, ""), ...parts].join(sep);
}

/** The data directory and its files, from `GWCLI_HOME` or `HOME`. */
export function resolvePaths(env: Env): GwcliPaths {
  const dir = env(HOME_ENV) || joinPath(homeDirectory(env), ".gwcli");
  return {
    dir,
    config: joinPath(dir, "config.json"),
    instances: joinPath(dir, "instances.json"),
    credentials: joinPath(dir, "credentials.age"),
    identity: joinPath(dir, "identity.txt"),
    legacyAuth: joinPath(dir, "auth.json"),
  };
}
