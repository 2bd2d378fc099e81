/** Which gateway (or gwcli) build fits this machine, and where it goes by default. */
import { CliError } from "../errors.ts";
import type { Env } from "../env.ts";
import { homeDirectory, joinPath } from "../paths.ts";

/** Operating systems with gateway releases. */
export type ReleaseOs = "linux" | "darwin" | "windows";
/** CPU architectures with gateway releases. */
export type ReleaseArch = "x86_64" | "aarch64";

/** The programs a release carries: the gateway, and gwcli itself (`gwcli self-update`). */
export type ReleaseProgram = "gateway" | "gwcli";

/** The file name of `program`'s executable on `os`. */
export function programBinary(program: ReleaseProgram, os: ReleaseOs): string {
  return os === "windows" ? `${program}.exe` : program;
}

/** A release build: its platform, archive format and binary name. */
export interface ReleasePlatform {
  os: ReleaseOs;
  arch: ReleaseArch;
  /** `tar.gz` on Linux and macOS, `zip` on Windows. */
  archive: "tar.gz" | "zip";
  /** `gateway`, or `gateway.exe` on Windows. */
  binary: string;
}

/** The build for `os`/`arch` (`Deno.build` values); other platforms have none. */
export function releasePlatform(os: string, arch: string): ReleasePlatform {
  if (os !== "linux" && os !== "darwin" && os !== "windows") {
    throw new CliError(
      `no gateway release exists for ${os}: releases cover linux, darwin, windows`,
    );
  }
  if (arch !== "x86_64" && arch !== "aarch64") {
    throw new CliError(`no gateway release exists for ${arch}: releases cover x86_64, aarch64`);
  }
  return {
    os,
    arch,
    archive: os === "windows" ? "zip" : "tar.gz",
    binary: os === "windows" ? "gateway.exe" : "gateway",
  };
}

/** The default install directory: `~/.local/bin`, or `%APPDATA%\gwcli\bin` on Windows. */
export function defaultInstallDir(os: ReleaseOs, env: Env): string {
  if (os === "windows") {
    const appData = env("APPDATA");
    if (!appData) throw new CliError("APPDATA is not set: pass -d/--dir");
    return joinPath(appData, "gwcli", "bin");
  }
  return joinPath(homeDirectory(env), ".local", "bin");
}

/** True when `dir` is one of the directories of `PATH`. */
export function onPath(dir: string, env: Env, os: ReleaseOs): boolean {
  const sep = os === "windows" ? ";" : ":";
  const norm = (p: string) => p.replace(/[\\/]+$/, "");
  return (env("PATH") ?? env("Path") ?? "").split(sep).some((p) => norm(p) === norm(dir));
}
